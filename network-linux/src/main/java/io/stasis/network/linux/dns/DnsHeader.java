package io.stasis.network.linux.dns;

/**
 * The fixed part of a message, without its section counts (the message's lists hold those). The
 * AD, CD and reserved bits are not kept: the resolver writes only its own answers with this record
 * and passes upstream answers on as bytes.
 */
public record DnsHeader(int id, boolean response, int opcode, boolean authoritative, boolean truncated,
                        boolean recursionDesired, boolean recursionAvailable, int rcode) {
    /** The bytes a header takes on the wire. */
    public static final int LENGTH = 12;
    public static final int OPCODE_QUERY = 0;

    public DnsHeader {
        if (id < 0 || id > 0xffff) throw new IllegalArgumentException("id " + id + " out of 0..65535");
        if (opcode < 0 || opcode > 15) throw new IllegalArgumentException("opcode " + opcode + " out of 0..15");
        if (rcode < 0 || rcode > 15) throw new IllegalArgumentException("rcode " + rcode + " out of 0..15");
    }

    /** A standard query asking for recursion. */
    public static DnsHeader query(int id) {
        return new DnsHeader(id, false, OPCODE_QUERY, false, false, true, false, Rcode.NOERROR);
    }

    /** The header of the answer to a query with this header: same id, opcode and RD. */
    public DnsHeader reply(int rcode) {
        return new DnsHeader(id, true, opcode, false, false, recursionDesired, true, rcode);
    }

    public DnsHeader withTruncated(boolean value) {
        return new DnsHeader(id, response, opcode, authoritative, value, recursionDesired, recursionAvailable, rcode);
    }

    /** Reads the first {@value #LENGTH} bytes of {@code message}: enough to answer even a message that breaks later on. */
    public static DnsHeader peek(byte[] message) throws DnsFormatException {
        if (message.length < LENGTH) throw new DnsFormatException("a header needs " + LENGTH + " bytes, got " + message.length);
        return fromWire(u16(message, 0), u16(message, 2));
    }

    static DnsHeader fromWire(int id, int flags) {
        return new DnsHeader(id, (flags & 0x8000) != 0, (flags >> 11) & 0xf, (flags & 0x0400) != 0, (flags & 0x0200) != 0,
                (flags & 0x0100) != 0, (flags & 0x0080) != 0, flags & 0xf);
    }

    int flags() {
        return (response ? 0x8000 : 0) | opcode << 11 | (authoritative ? 0x0400 : 0) | (truncated ? 0x0200 : 0)
                | (recursionDesired ? 0x0100 : 0) | (recursionAvailable ? 0x0080 : 0) | rcode;
    }

    /** {@code message} with its first two bytes set to {@code id}: how an upstream answer gets the client's id back. */
    static byte[] withId(byte[] message, int id) {
        byte[] copy = message.clone();
        copy[0] = (byte) (id >> 8);
        copy[1] = (byte) id;
        return copy;
    }

    private static int u16(byte[] b, int at) {
        return (b[at] & 0xff) << 8 | b[at + 1] & 0xff;
    }
}
