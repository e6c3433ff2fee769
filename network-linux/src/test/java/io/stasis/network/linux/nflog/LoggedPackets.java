package io.stasis.network.linux.nflog;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Writes what nfnetlink_log sends, independently of {@link NflogCodec}: netlink messages of logged
 * packets (with attributes the reader does not need around the two it does), and IPv4 packets cut
 * to the copy range as the kernel cuts them.
 */
final class LoggedPackets {
    static final int NFULA_PACKET_HDR = 1;
    static final int NFULA_TIMESTAMP = 3;
    static final int NFULA_IFINDEX_INDEV = 4;
    private static final int NLMSG_DONE = 3;
    private static final int NLM_F_MULTI = 2;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    /** An attribute of a packet message: its type and value. */
    record Attribute(int type, byte[] value) {
        static Attribute prefix(String prefix) {
            byte[] text = prefix.getBytes(StandardCharsets.US_ASCII);
            return new Attribute(NflogCodec.NFULA_PREFIX, Arrays.copyOf(text, text.length + 1));
        }

        static Attribute payload(byte[] packet) {
            return new Attribute(NflogCodec.NFULA_PAYLOAD, packet);
        }
    }

    /** Appends one NFULNL_MSG_PACKET message with {@code attributes} in the order given. */
    LoggedPackets packet(int sequence, List<Attribute> attributes) {
        var body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {2, 0, 0, 7}); // nfgenmsg: AF_INET, version 0, res_id (the group) 7
        for (var a : attributes) {
            body.writeBytes(host(4).putShort((short) (4 + a.value().length)).putShort((short) a.type()).array());
            body.writeBytes(a.value());
            body.writeBytes(new byte[-a.value().length & 3]);
        }
        message(NflogCodec.MSG_PACKET, NLM_F_MULTI, sequence, body.toByteArray());
        return this;
    }

    /** Appends the NLMSG_DONE that ends a batch. */
    LoggedPackets done(int sequence) {
        message(NLMSG_DONE, NLM_F_MULTI, sequence, new byte[4]);
        return this;
    }

    /** Appends an acknowledgement (error 0) or error of request {@code sequence}. */
    LoggedPackets ack(int sequence, int error) {
        message(NflogCodec.NLMSG_ERROR, 0, sequence, host(4 + 16).putInt(error).array());
        return this;
    }

    byte[] bytes() {
        return out.toByteArray();
    }

    private void message(int type, int flags, int sequence, byte[] body) {
        out.writeBytes(host(16).putInt(16 + body.length).putShort((short) type).putShort((short) flags).putInt(sequence).putInt(0).array());
        out.writeBytes(body);
    }

    private static ByteBuffer host(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.nativeOrder());
    }

    /**
     * An IPv4 packet with {@code optionWords} words of options, cut to {@code copyRange} bytes:
     * for TCP and UDP the source port 40000 and the destination port, for ICMP the type and code 0.
     */
    static byte[] ipv4(byte[] source, byte[] destination, int protocol, int port, int icmpType, int optionWords, int fragmentOffset,
                       int copyRange) {
        int headerLength = 20 + 4 * optionWords;
        var b = ByteBuffer.allocate(headerLength + 40).order(ByteOrder.BIG_ENDIAN);
        b.put((byte) (0x40 | headerLength / 4)).put((byte) 0).putShort((short) (headerLength + 40)).putShort((short) 1234)
                .putShort((short) (0x4000 | fragmentOffset)).put((byte) 64).put((byte) protocol).putShort((short) 0)
                .put(source).put(destination);
        for (int i = 0; i < optionWords; i++) b.putInt(0x01010101); // NOPs
        switch (protocol) {
            case DroppedPacket.TCP, DroppedPacket.UDP -> b.putShort((short) 40000).putShort((short) port);
            case DroppedPacket.ICMP -> b.put((byte) icmpType).put((byte) 0);
            default -> b.putInt(0xdeadbeef);
        }
        return Arrays.copyOf(b.array(), Math.min(copyRange, b.capacity()));
    }
}
