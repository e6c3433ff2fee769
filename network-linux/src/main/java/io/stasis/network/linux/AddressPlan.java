package io.stasis.network.linux;

import io.stasis.core.network.Cidr;
import io.stasis.core.network.NetworkAttachment;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * Slot n of the range is the /30 at offset 4n: the network address, the gateway (the host end),
 * the sandbox's address, the broadcast address.
 */
final class AddressPlan {
    static final int PREFIX = 30;

    private final Cidr range;
    private final String interfacePrefix;

    AddressPlan(Cidr range, String interfacePrefix) {
        this.range = range;
        this.interfacePrefix = interfacePrefix;
    }

    int capacity() {
        return 1 << (32 - range.prefix() - 2);
    }

    NetworkAttachment attachment(int slot) {
        if (slot < 0 || slot >= capacity()) throw new IllegalArgumentException("slot " + slot + " outside 0.." + (capacity() - 1));
        int base = toInt(range.network()) + slot * 4;
        return new NetworkAttachment(slot, interfacePrefix + slot, toAddress(base + 1), toAddress(base + 2), PREFIX, Optional.empty());
    }

    /** The slot whose sandbox address this is, if any. */
    Optional<Integer> slotOf(InetAddress sandboxAddress) {
        if (!range.contains(sandboxAddress)) return Optional.empty();
        int offset = toInt(sandboxAddress) - toInt(range.network());
        return offset % 4 == 2 ? Optional.of(offset / 4) : Optional.empty();
    }

    private static int toInt(InetAddress address) {
        return ByteBuffer.wrap(address.getAddress()).getInt();
    }

    private static InetAddress toAddress(int value) {
        try {
            return InetAddress.getByAddress(ByteBuffer.allocate(4).putInt(value).array());
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
