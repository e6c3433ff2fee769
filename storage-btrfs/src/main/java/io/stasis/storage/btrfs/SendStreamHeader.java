package io.stasis.storage.btrfs;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;

/**
 * The name a {@code btrfs send} stream gives the subvolume it holds: {@code btrfs receive} makes
 * it under that name, the basename of the snapshot it was sent from, whatever the caller meant.
 * Read from the stream's first command (SUBVOL for a full stream, SNAPSHOT for an incremental
 * one), as the kernel's send.h lays it out: the magic {@code "btrfs-stream\0"} and a le32
 * version; then each command as le32 length (of its attributes), le16 command, le32 crc, and
 * its attributes as le16 type, le16 length and the value.
 */
final class SendStreamHeader {
    private static final byte[] MAGIC = "btrfs-stream\0".getBytes(StandardCharsets.US_ASCII);
    private static final int COMMAND_HEADER = 10;
    private static final int SUBVOL = 1;
    private static final int SNAPSHOT = 2;
    private static final int PATH = 15;
    /** Room for the first command: a name of at most 255 bytes, two UUIDs and two transids. */
    static final int PEEK_BYTES = 4096;

    private SendStreamHeader() {
    }

    /**
     * The subvolume's name, read without consuming {@code in} (which must support mark and
     * reset); empty if the stream does not begin as a send stream of a subvolume does.
     */
    static Optional<String> subvolumeName(InputStream in) throws IOException {
        in.mark(PEEK_BYTES);
        try {
            return subvolumeName(in.readNBytes(PEEK_BYTES));
        } finally {
            in.reset();
        }
    }

    static Optional<String> subvolumeName(byte[] head) {
        if (head.length < MAGIC.length + 4 + COMMAND_HEADER || !Arrays.equals(head, 0, MAGIC.length, MAGIC, 0, MAGIC.length))
            return Optional.empty();
        var buffer = ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).position(MAGIC.length + 4);
        long length = Integer.toUnsignedLong(buffer.getInt());
        int command = Short.toUnsignedInt(buffer.getShort());
        buffer.getInt(); // crc
        if (command != SUBVOL && command != SNAPSHOT) return Optional.empty();
        long end = buffer.position() + length;
        if (end > head.length) return Optional.empty();
        while (buffer.position() + 4 <= end) {
            int type = Short.toUnsignedInt(buffer.getShort());
            int valueLength = Short.toUnsignedInt(buffer.getShort());
            if (buffer.position() + valueLength > end) return Optional.empty();
            if (type == PATH) return Optional.of(new String(head, buffer.position(), valueLength, StandardCharsets.UTF_8));
            buffer.position(buffer.position() + valueLength);
        }
        return Optional.empty();
    }
}
