package io.stasis.sdk;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes a POSIX tar archive (ustar, with pax extended headers for paths and link targets that do
 * not fit its fields), as GNU tar and busybox tar read it. Only what a build context needs:
 * directories, regular files and symbolic links, owned by root.
 */
final class TarWriter {
    private static final int BLOCK = 512;
    private static final int NAME_BYTES = 100;
    private static final int PREFIX_BYTES = 155;
    /** The largest size the 11 octal digits of ustar's size field hold (8 GiB - 1). */
    static final long MAX_ENTRY_BYTES = 077777777777L;
    private static final byte REGULAR = '0', SYMLINK = '2', DIRECTORY = '5', PAX_HEADER = 'x';

    private final OutputStream out;

    TarWriter(OutputStream out) {
        this.out = out;
    }

    /** A directory; {@code name} is relative ({@code ./src/}) and gets a trailing slash if it lacks one. */
    void directory(String name, int mode, long mtimeSeconds) throws IOException {
        header(name.endsWith("/") ? name : name + "/", DIRECTORY, mode, 0, mtimeSeconds, "");
    }

    /** A regular file of exactly {@code size} bytes read from {@code content}. */
    void file(String name, int mode, long mtimeSeconds, long size, InputStream content) throws IOException {
        if (size > MAX_ENTRY_BYTES) throw new IOException(name + " is larger than a tar entry can be (" + size + " bytes)");
        header(name, REGULAR, mode, size, mtimeSeconds, "");
        byte[] buffer = new byte[64 * 1024];
        long left = size;
        while (left > 0) {
            int n = content.read(buffer, 0, (int) Math.min(buffer.length, left));
            // The header already promised `size` bytes: a file that shrank cannot be written truthfully.
            if (n < 0) throw new IOException(name + " became shorter while it was archived (" + (size - left) + " of " + size + " bytes)");
            out.write(buffer, 0, n);
            left -= n;
        }
        pad(size);
    }

    /** A symbolic link to {@code target}, kept as written (it is resolved where it is unpacked). */
    void symlink(String name, String target, long mtimeSeconds) throws IOException {
        header(name, SYMLINK, 0777, 0, mtimeSeconds, target);
    }

    /** The end-of-archive marker: two zero blocks. Does not close the stream. */
    void finish() throws IOException {
        out.write(new byte[2 * BLOCK]);
        out.flush();
    }

    private void header(String name, byte type, int mode, long size, long mtimeSeconds, String linkName) throws IOException {
        byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        byte[] linkBytes = linkName.getBytes(StandardCharsets.UTF_8);
        int split = splitAt(nameBytes);
        boolean longName = nameBytes.length > NAME_BYTES && split < 0;
        boolean longLink = linkBytes.length > NAME_BYTES;
        if (longName || longLink) {
            var records = new StringBuilder();
            if (longName) records.append(paxRecord("path", name));
            if (longLink) records.append(paxRecord("linkpath", linkName));
            byte[] data = records.toString().getBytes(StandardCharsets.UTF_8);
            // The pax header's own name is only informative; readers use the records.
            block(truncate("./PaxHeaders/" + baseName(name)), new byte[0], PAX_HEADER, 0644, data.length, mtimeSeconds, new byte[0]);
            out.write(data);
            pad(data.length);
        }
        byte[] prefix = new byte[0];
        byte[] shortName = nameBytes;
        if (longName) {
            shortName = truncate(name);
        } else if (nameBytes.length > NAME_BYTES) {
            prefix = Arrays.copyOfRange(nameBytes, 0, split);
            shortName = Arrays.copyOfRange(nameBytes, split + 1, nameBytes.length);
        }
        block(shortName, prefix, type, mode, size, mtimeSeconds, longLink ? Arrays.copyOf(linkBytes, NAME_BYTES) : linkBytes);
    }

    /** Writes one ustar header block. */
    private void block(byte[] name, byte[] prefix, byte type, int mode, long size, long mtimeSeconds, byte[] linkName) throws IOException {
        byte[] h = new byte[BLOCK];
        System.arraycopy(name, 0, h, 0, Math.min(name.length, NAME_BYTES));
        octal(h, 100, 8, mode & 07777);
        octal(h, 108, 8, 0); // uid: root, as a Dockerfile's COPY makes it
        octal(h, 116, 8, 0); // gid
        octal(h, 124, 12, size);
        octal(h, 136, 12, Math.max(0, mtimeSeconds));
        Arrays.fill(h, 148, 156, (byte) ' '); // the checksum counts its own field as spaces
        h[156] = type;
        System.arraycopy(linkName, 0, h, 157, Math.min(linkName.length, NAME_BYTES));
        ascii(h, 257, "ustar\0");
        ascii(h, 263, "00");
        ascii(h, 265, "root");
        ascii(h, 297, "root");
        System.arraycopy(prefix, 0, h, 345, Math.min(prefix.length, PREFIX_BYTES));
        long sum = 0;
        for (byte b : h) sum += b & 0xff;
        octal(h, 148, 7, sum); // six digits and a NUL, then the space already there
        out.write(h);
    }

    /**
     * Where to cut a name too long for the name field into ustar's prefix and name: the index of a
     * slash with at most 155 bytes before it and 1 to 100 after it, or -1 when there is none.
     */
    static int splitAt(byte[] name) {
        if (name.length <= NAME_BYTES) return -1;
        for (int i = Math.max(0, name.length - NAME_BYTES - 1); i < name.length - 1 && i <= PREFIX_BYTES; i++) {
            if (name[i] == '/') return i;
        }
        return -1;
    }

    /** {@code "<length> key=value\n"}, where the length counts the whole record, its own digits included. */
    static String paxRecord(String key, String value) {
        int body = (" " + key + "=" + value + "\n").getBytes(StandardCharsets.UTF_8).length;
        int length = body + Integer.toString(body).length();
        if (Integer.toString(length).length() != Integer.toString(body).length()) length++; // e.g. 98 + 2 digits = 100: 3 digits
        return length + " " + key + "=" + value + "\n";
    }

    private static String baseName(String name) {
        String trimmed = name.endsWith("/") ? name.substring(0, name.length() - 1) : name;
        return trimmed.substring(trimmed.lastIndexOf('/') + 1);
    }

    /** At most the name field's 100 bytes, cut at a character boundary. */
    private static byte[] truncate(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        if (bytes.length <= NAME_BYTES) return bytes;
        int end = NAME_BYTES;
        while (end > 0 && (bytes[end] & 0xc0) == 0x80) end--; // not inside a UTF-8 sequence
        return Arrays.copyOf(bytes, end);
    }

    /** {@code value} in octal, zero-padded to {@code width - 1} digits, then a NUL. */
    private static void octal(byte[] h, int offset, int width, long value) {
        String digits = Long.toOctalString(value);
        if (digits.length() > width - 1) throw new IllegalArgumentException(value + " does not fit a " + width + "-byte tar field");
        ascii(h, offset, "0".repeat(width - 1 - digits.length()) + digits);
        h[offset + width - 1] = 0;
    }

    private static void ascii(byte[] h, int offset, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(bytes, 0, h, offset, bytes.length);
    }

    private void pad(long written) throws IOException {
        int rest = (int) (written % BLOCK);
        if (rest != 0) out.write(new byte[BLOCK - rest]);
    }
}
