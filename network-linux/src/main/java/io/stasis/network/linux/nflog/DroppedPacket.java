package io.stasis.network.linux.nflog;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.OptionalInt;

/**
 * A packet the filter dropped and logged, as its log prefix and IPv4 header tell it.
 *
 * @param slot        the sandbox's slot, empty for the shared input chain (then the source tells the sandbox)
 * @param rule        the filter rule's name, e.g. {@code "default deny"}
 * @param source      the sender; the filter dropped spoofed sources before any logged rule
 * @param destination where the packet was going
 * @param protocol    the IP protocol number (6 TCP, 17 UDP, 1 ICMP, …)
 * @param port        the TCP or UDP destination port, 0 for other protocols and for fragments after the first
 * @param icmpType    the ICMP type (8 echo request, …) for ICMP, empty otherwise
 */
public record DroppedPacket(OptionalInt slot, String rule, Inet4Address source, Inet4Address destination, int protocol, int port,
                            OptionalInt icmpType) {
    public static final int ICMP = 1;
    public static final int TCP = 6;
    public static final int UDP = 17;
    private static final int IPV4_HEADER_MIN = 20;

    /** {@code "tcp"}, {@code "udp"}, {@code "icmp"}, or {@code "ip proto N"} for the rest. */
    public String protocolName() {
        return switch (protocol) {
            case TCP -> "tcp";
            case UDP -> "udp";
            case ICMP -> "icmp";
            default -> "ip proto " + protocol;
        };
    }

    /** Reads a logged packet: {@code prefix} is {@code "<slot> <rule>"} ({@code "-"} for no slot), {@code payload} starts with the IPv4 header. */
    public static DroppedPacket parse(String prefix, byte[] payload) throws NflogFormatException {
        int space = prefix.indexOf(' ');
        if (space < 0 || space == prefix.length() - 1) throw new NflogFormatException("log prefix is not \"<slot> <rule>\": " + prefix);
        OptionalInt slot = slot(prefix.substring(0, space));
        String rule = prefix.substring(space + 1);

        if (payload.length < IPV4_HEADER_MIN) throw new NflogFormatException("IPv4 header truncated: " + payload.length + " bytes");
        int version = (payload[0] & 0xff) >>> 4;
        int headerLength = (payload[0] & 0x0f) * 4;
        if (version != 4) throw new NflogFormatException("not an IPv4 packet: version " + version);
        if (headerLength < IPV4_HEADER_MIN || headerLength > payload.length)
            throw new NflogFormatException("IPv4 header length " + headerLength + " with " + payload.length + " bytes logged");
        int protocol = payload[9] & 0xff;
        boolean firstFragment = (((payload[6] & 0x1f) << 8) | (payload[7] & 0xff)) == 0;
        int transport = payload.length - headerLength;
        int port = firstFragment && transport >= 4 && (protocol == TCP || protocol == UDP)
                ? ((payload[headerLength + 2] & 0xff) << 8) | (payload[headerLength + 3] & 0xff) : 0;
        OptionalInt icmpType = firstFragment && transport >= 1 && protocol == ICMP ? OptionalInt.of(payload[headerLength] & 0xff) : OptionalInt.empty();
        return new DroppedPacket(slot, rule, address(payload, 12), address(payload, 16), protocol, port, icmpType);
    }

    private static OptionalInt slot(String text) throws NflogFormatException {
        if (text.equals("-")) return OptionalInt.empty();
        if (!text.matches("[0-9]{1,9}")) throw new NflogFormatException("log prefix slot is not a number: " + text);
        return OptionalInt.of(Integer.parseInt(text));
    }

    private static Inet4Address address(byte[] header, int offset) {
        try {
            return (Inet4Address) InetAddress.getByAddress(Arrays.copyOfRange(header, offset, offset + 4));
        } catch (UnknownHostException e) {
            throw new IllegalStateException("4 bytes are always an IPv4 address", e);
        }
    }
}
