package io.stasis.network.linux.dns;

/**
 * Domain names on the wire (RFC 1035 section 3.1 and 4.1.4): labels of 1 to 63 bytes, at most
 * 255 bytes in all, possibly ending in a pointer to an earlier name in the message.
 *
 * <p>Names are held as text joined by dots, so a label may hold only printable ASCII other than
 * the dot and space: a name the text form could not give back unchanged is refused as malformed.
 * Real host names never need more.
 */
final class DnsName {
    static final int MAX_LENGTH = 255;
    static final int MAX_LABEL = 63;

    private DnsName() {
    }

    /** A name read from a message, and the offset just after it where it stood (not where a pointer led). */
    record Read(String name, int end) {
    }

    /**
     * Reads the name at {@code start}. Every pointer must point before the place the previous one
     * led to (before {@code start} for the first): the offsets strictly fall, so a loop of pointers
     * cannot hold the reader, and a pointer into the name's own labels is refused.
     */
    static Read read(byte[] message, int start) throws DnsFormatException {
        var name = new StringBuilder();
        int at = start;
        int end = -1;
        int limit = start;
        int wireLength = 1; // the root's zero byte
        while (true) {
            if (at >= message.length) throw new DnsFormatException("name at " + start + " runs past the end of the message");
            int length = message[at] & 0xff;
            switch (length >> 6) {
                case 0 -> {
                    if (length == 0) return new Read(name.toString(), end < 0 ? at + 1 : end);
                    if (at + 1 + length > message.length) throw new DnsFormatException("label at " + at + " runs past the end of the message");
                    wireLength += 1 + length;
                    if (wireLength > MAX_LENGTH) throw new DnsFormatException("name at " + start + " is longer than " + MAX_LENGTH + " bytes");
                    if (!name.isEmpty()) name.append('.');
                    for (int i = at + 1; i <= at + length; i++) {
                        int c = message[i] & 0xff;
                        if (!allowed(c)) throw new DnsFormatException("label at " + at + " holds byte " + c + ", not printable ASCII other than dot");
                        name.append((char) c);
                    }
                    at += 1 + length;
                }
                case 3 -> {
                    if (at + 1 >= message.length) throw new DnsFormatException("pointer at " + at + " runs past the end of the message");
                    int target = (length & 0x3f) << 8 | message[at + 1] & 0xff;
                    if (target >= limit) throw new DnsFormatException("pointer at " + at + " to " + target + " does not point backwards");
                    if (end < 0) end = at + 2;
                    limit = target;
                    at = target;
                }
                default -> throw new DnsFormatException("label at " + at + " has the reserved type bits " + (length >> 6));
            }
        }
    }

    /** Refuses, as a programming error, a name {@link DnsWriter} could not write. */
    static void check(String name) {
        if (name == null) throw new IllegalArgumentException("a name is required");
        if (name.isEmpty()) return;
        int wireLength = 1;
        for (String label : name.split("\\.", -1)) {
            if (label.isEmpty() || label.length() > MAX_LABEL)
                throw new IllegalArgumentException("name '" + name + "' has a label of " + label.length() + " bytes (1.." + MAX_LABEL + ")");
            for (char c : label.toCharArray())
                if (!allowed(c)) throw new IllegalArgumentException("name '" + name + "' holds '" + c + "', not printable ASCII other than dot");
            wireLength += 1 + label.length();
        }
        if (wireLength > MAX_LENGTH) throw new IllegalArgumentException("name '" + name + "' is longer than " + MAX_LENGTH + " bytes");
    }

    private static boolean allowed(int c) {
        return c > ' ' && c < 0x7f && c != '.';
    }
}
