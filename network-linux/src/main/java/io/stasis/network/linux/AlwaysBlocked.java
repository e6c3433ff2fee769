package io.stasis.network.linux;

import io.stasis.core.network.Cidr;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Destinations no policy can open: the host itself, other sandboxes, loopback, link-local (cloud
 * metadata at 169.254.169.254 among them), multicast and reserved ranges; and private ranges unless
 * the operator allowed them. The packet filter holds the same lists as sets; the egress proxy, whose
 * upstream connections leave from the host itself and so pass no forwarding rule, asks here.
 */
final class AlwaysBlocked {
    static final List<Cidr> RESERVED = cidrs("0.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "240.0.0.0/4",
            "192.0.0.0/24", "198.18.0.0/15");
    static final List<Cidr> PRIVATE = cidrs("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10");

    /** How long the host's own addresses are taken as known: enumerating interfaces costs more than a connection. */
    private static final long HOST_ADDRESSES_TTL_NANOS = 5_000_000_000L;

    private final Cidr sandboxRange;
    private final List<Cidr> allowedPrivate;
    private volatile HostAddresses hostAddresses = new HostAddresses(List.of(), Long.MIN_VALUE);

    private record HostAddresses(List<InetAddress> addresses, long readAt) {
    }

    AlwaysBlocked(Cidr sandboxRange, List<Cidr> allowedPrivate) {
        this.sandboxRange = sandboxRange;
        this.allowedPrivate = List.copyOf(allowedPrivate);
    }

    /** Why {@code address} is blocked for every sandbox (a rule name for events), or empty if it is not. */
    Optional<String> reason(InetAddress address) {
        if (address.getAddress().length != 4) return Optional.of("blocked ipv6");
        if (sandboxRange.contains(address)) return Optional.of("blocked sandbox network");
        if (address.isLoopbackAddress()) return Optional.of("blocked loopback");
        if (address.isLinkLocalAddress()) return Optional.of("blocked link-local");
        for (Cidr reserved : RESERVED) if (reserved.contains(address)) return Optional.of("blocked reserved " + reserved);
        if (hostAddresses().contains(address)) return Optional.of("blocked host");
        for (Cidr p : PRIVATE)
            if (p.contains(address) && allowedPrivate.stream().noneMatch(a -> a.contains(address)))
                return Optional.of("blocked private " + p);
        return Optional.empty();
    }

    List<Cidr> allowedPrivate() {
        return allowedPrivate;
    }

    private List<InetAddress> hostAddresses() {
        var known = hostAddresses;
        long now = System.nanoTime();
        if (known.readAt() != Long.MIN_VALUE && now - known.readAt() < HOST_ADDRESSES_TTL_NANOS) return known.addresses();
        try {
            var out = new ArrayList<InetAddress>();
            for (var nic : Collections.list(NetworkInterface.getNetworkInterfaces()))
                out.addAll(Collections.list(nic.getInetAddresses()));
            hostAddresses = new HostAddresses(List.copyOf(out), now);
            return out;
        } catch (SocketException e) {
            return known.addresses();
        }
    }

    private static List<Cidr> cidrs(String... texts) {
        return Arrays.stream(texts).map(t -> Cidr.parse(t, "cidr")).toList();
    }
}
