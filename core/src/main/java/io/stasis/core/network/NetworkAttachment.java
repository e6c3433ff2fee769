package io.stasis.core.network;

import java.net.InetAddress;
import java.util.Objects;
import java.util.Optional;

/**
 * How one sandbox is wired to the host: a point-to-point link whose host end is
 * {@code hostInterface} with {@code gateway}, and whose sandbox end (eth0) has {@code address}.
 * The gateway also serves the sandbox's DNS. Everything derives from the slot, so a hibernated
 * sandbox comes back with the same addresses and its connections continue.
 *
 * @param inherited a fork's parent's address, kept on the fork's eth0 so that sockets bound to it
 *                  restore; its traffic is dropped at the host (it is not the fork's own address)
 */
public record NetworkAttachment(int slot, String hostInterface, InetAddress gateway, InetAddress address, int prefixLength,
                                Optional<InetAddress> inherited) {

    public NetworkAttachment {
        Objects.requireNonNull(hostInterface);
        Objects.requireNonNull(gateway);
        Objects.requireNonNull(address);
        Objects.requireNonNull(inherited);
        if (hostInterface.length() > 15) throw new IllegalArgumentException("interface names have at most 15 characters: " + hostInterface);
    }

    public NetworkAttachment inheriting(InetAddress parentAddress) {
        return new NetworkAttachment(slot, hostInterface, gateway, address, prefixLength,
                parentAddress.equals(address) ? Optional.empty() : Optional.of(parentAddress));
    }
}
