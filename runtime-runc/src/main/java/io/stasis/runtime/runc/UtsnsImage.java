package io.stasis.runtime.runc;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * CRIU's image of a UTS namespace ({@code utsns-N.img}), which holds the hostname a restore puts
 * back: CRIU's two magic numbers, then one entry, its length and a protobuf {@code utsns_entry}
 * ({@code nodename = 1}, {@code domainname = 2}, both strings). A fork restores with its own
 * hostname by reading a copy of this image that names it, so nothing has to set the hostname while
 * the restore runs. Fields other than the nodename are kept as they were, byte for byte.
 */
final class UtsnsImage {
    static final int COMMON_MAGIC = 0x54564319;
    static final int UTSNS_MAGIC = 0x54473203;
    private static final int NODENAME = 1;
    private static final int LENGTH_DELIMITED = 2;
    private static final int VARINT = 0;

    private UtsnsImage() {
    }

    /** The hostname (nodename) {@code image} restores. */
    static String hostname(byte[] image) {
        return parse(image).nodename;
    }

    /** {@code image} with {@code hostname} as its nodename, everything else as it was. */
    static byte[] withHostname(byte[] image, String hostname) {
        var parsed = parse(image);
        var entry = new ByteArrayOutputStream();
        byte[] name = hostname.getBytes(StandardCharsets.UTF_8);
        writeVarint(entry, NODENAME << 3 | LENGTH_DELIMITED);
        writeVarint(entry, name.length);
        entry.writeBytes(name);
        entry.writeBytes(parsed.otherFields);
        byte[] payload = entry.toByteArray();
        return ByteBuffer.allocate(12 + payload.length).order(ByteOrder.LITTLE_ENDIAN)
                .putInt(COMMON_MAGIC).putInt(UTSNS_MAGIC).putInt(payload.length).put(payload).array();
    }

    private record Parsed(String nodename, byte[] otherFields) {
    }

    private static Parsed parse(byte[] image) {
        var in = ByteBuffer.wrap(image).order(ByteOrder.LITTLE_ENDIAN);
        if (image.length < 12 || in.getInt() != COMMON_MAGIC || in.getInt() != UTSNS_MAGIC)
            throw new IllegalArgumentException("not a CRIU UTS namespace image");
        int size = in.getInt();
        if (size < 0 || size != in.remaining()) throw new IllegalArgumentException("a UTS namespace image of more or less than one entry");
        String nodename = null;
        var others = new ByteArrayOutputStream();
        while (in.hasRemaining()) {
            int fieldStart = in.position();
            long tag = readVarint(in);
            int wire = (int) (tag & 7);
            if (wire == LENGTH_DELIMITED) {
                long length = readVarint(in);
                if (length > in.remaining()) throw new IllegalArgumentException("a UTS namespace image cut short");
                byte[] value = new byte[(int) length];
                in.get(value);
                if (tag >>> 3 == NODENAME) {
                    nodename = new String(value, StandardCharsets.UTF_8);
                    continue;
                }
            } else if (wire == VARINT) {
                readVarint(in);
            } else {
                throw new IllegalArgumentException("a UTS namespace image with a field of wire type " + wire);
            }
            others.write(image, fieldStart, in.position() - fieldStart);
        }
        if (nodename == null) throw new IllegalArgumentException("a UTS namespace image without a nodename");
        return new Parsed(nodename, others.toByteArray());
    }

    private static long readVarint(ByteBuffer in) {
        long value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (!in.hasRemaining()) throw new IllegalArgumentException("a UTS namespace image cut short");
            byte b = in.get();
            value |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) return value;
        }
        throw new IllegalArgumentException("a UTS namespace image with a varint over 64 bits");
    }

    private static void writeVarint(ByteArrayOutputStream out, long value) {
        while ((value & ~0x7fL) != 0) {
            out.write((int) (value & 0x7f) | 0x80);
            value >>>= 7;
        }
        out.write((int) value);
    }
}
