package io.stasis.network.linux.nflog;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The netlink messages of nfnetlink_log, as bytes: the request that binds a group, and the packet
 * and acknowledgement messages that come back. Netlink headers and attribute headers are in the
 * host's byte order; the values nfnetlink_log defines ({@code res_id}, the mode's copy range, the
 * queue threshold) in network order. Layouts are those of {@code <linux/netlink.h>},
 * {@code <linux/netfilter/nfnetlink.h>} and {@code <linux/netfilter/nfnetlink_log.h>}.
 */
final class NflogCodec {
    static final int NLMSG_HDRLEN = 16;
    static final int NLMSG_ERROR = 2;
    /** {@code NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET}. */
    static final int MSG_PACKET = 4 << 8;
    /** {@code NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_CONFIG}. */
    static final int MSG_CONFIG = 4 << 8 | 1;
    static final int NFULA_PAYLOAD = 9;
    static final int NFULA_PREFIX = 10;

    private static final int NLM_F_REQUEST = 1;
    private static final int NLM_F_ACK = 4;
    private static final int NFGENMSG_LEN = 4;
    private static final int NLA_HDRLEN = 4;
    /** The attribute type without {@code NLA_F_NESTED} and {@code NLA_F_NET_BYTEORDER}. */
    private static final int NLA_TYPE_MASK = 0x3fff;
    private static final int NFULA_CFG_CMD = 1;
    private static final int NFULA_CFG_MODE = 2;
    private static final int NFULA_CFG_QTHRESH = 5;
    private static final int NFULNL_CFG_CMD_BIND = 1;
    private static final int NFULNL_COPY_PACKET = 2;

    private NflogCodec() {
    }

    /** What the reader acts on; other messages (NOOP, DONE, overrun notices) are skipped. */
    sealed interface Message permits Packet, Ack {
    }

    /** A logged packet: the rule's prefix and the packet's first bytes. */
    record Packet(String prefix, byte[] payload) implements Message {
    }

    /** The answer to request {@code sequence}: {@code error} 0 acknowledges it, otherwise it is a negated errno. */
    record Ack(int sequence, int error) implements Message {
    }

    /**
     * One request that binds this socket to {@code group}, asks for the first {@code copyRange}
     * bytes of each packet, and for each packet to be sent at once rather than batched; with an
     * acknowledgement. The address family's default logger ({@code PF_BIND}) is left alone:
     * {@code log group N} names nfnetlink_log itself, and taking over the family's default would
     * change the host's other logging.
     */
    static byte[] bind(int sequence, int group, int copyRange) {
        var b = ByteBuffer.allocate(NLMSG_HDRLEN + NFGENMSG_LEN + 8 + 12 + 8).order(ByteOrder.nativeOrder());
        b.putInt(b.capacity()).putShort((short) MSG_CONFIG).putShort((short) (NLM_F_REQUEST | NLM_F_ACK)).putInt(sequence).putInt(0);
        b.put((byte) 0).put((byte) 0).order(ByteOrder.BIG_ENDIAN).putShort((short) group).order(ByteOrder.nativeOrder());
        // struct nfulnl_msg_config_cmd { u8 command; }, padded to 4
        b.putShort((short) (NLA_HDRLEN + 1)).putShort((short) NFULA_CFG_CMD).put((byte) NFULNL_CFG_CMD_BIND).put(new byte[3]);
        // struct nfulnl_msg_config_mode { __be32 copy_range; u8 copy_mode; u8 pad; }, padded to 8
        b.putShort((short) (NLA_HDRLEN + 6)).putShort((short) NFULA_CFG_MODE);
        b.order(ByteOrder.BIG_ENDIAN).putInt(copyRange).order(ByteOrder.nativeOrder()).put((byte) NFULNL_COPY_PACKET).put(new byte[3]);
        b.putShort((short) (NLA_HDRLEN + 4)).putShort((short) NFULA_CFG_QTHRESH).order(ByteOrder.BIG_ENDIAN).putInt(1);
        return b.array();
    }

    /** The packets and acknowledgements among the netlink messages in {@code data[0, length)}. */
    static List<Message> decode(byte[] data, int length) throws NflogFormatException {
        if (length < 0 || length > data.length) throw new IllegalArgumentException("length " + length + " outside 0.." + data.length);
        var b = ByteBuffer.wrap(data, 0, length).order(ByteOrder.nativeOrder());
        var out = new ArrayList<Message>();
        int at = 0;
        while (at < length) {
            if (length - at < NLMSG_HDRLEN) throw new NflogFormatException("netlink header truncated at " + at);
            long size = Integer.toUnsignedLong(b.getInt(at));
            if (size < NLMSG_HDRLEN || size > length - at)
                throw new NflogFormatException("netlink message at " + at + " claims " + size + " bytes, " + (length - at) + " left");
            int type = Short.toUnsignedInt(b.getShort(at + 4));
            int sequence = b.getInt(at + 8);
            int end = at + (int) size;
            if (type == MSG_PACKET) out.add(packet(b, at + NLMSG_HDRLEN, end));
            else if (type == NLMSG_ERROR) {
                if (end - at < NLMSG_HDRLEN + 4) throw new NflogFormatException("netlink error message at " + at + " without its code");
                out.add(new Ack(sequence, b.getInt(at + NLMSG_HDRLEN)));
            }
            at = end + padding(end);
        }
        return out;
    }

    private static Packet packet(ByteBuffer b, int start, int end) throws NflogFormatException {
        if (end - start < NFGENMSG_LEN) throw new NflogFormatException("NFLOG packet message at " + start + " without its nfgenmsg");
        String prefix = "";
        byte[] payload = null;
        int at = start + NFGENMSG_LEN;
        while (at < end) {
            if (end - at < NLA_HDRLEN) throw new NflogFormatException("attribute header truncated at " + at);
            int size = Short.toUnsignedInt(b.getShort(at));
            if (size < NLA_HDRLEN || size > end - at)
                throw new NflogFormatException("attribute at " + at + " claims " + size + " bytes, " + (end - at) + " left");
            int type = b.getShort(at + 2) & NLA_TYPE_MASK;
            byte[] value = new byte[size - NLA_HDRLEN];
            b.get(at + NLA_HDRLEN, value);
            if (type == NFULA_PREFIX) prefix = cString(value);
            else if (type == NFULA_PAYLOAD) payload = value;
            at += size + padding(size);
        }
        if (payload == null) throw new NflogFormatException("NFLOG packet message at " + start + " without a payload");
        return new Packet(prefix, payload);
    }

    /** The text up to the first NUL; bytes beyond ASCII become U+FFFD rather than failing. */
    private static String cString(byte[] value) {
        int n = 0;
        while (n < value.length && value[n] != 0) n++;
        return new String(value, 0, n, StandardCharsets.US_ASCII);
    }

    private static int padding(int size) {
        return -size & 3;
    }
}
