package io.stasis.templates.oci;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Writes tar archives byte by byte, for members GNU tar will not make (devices without root,
 * lying sizes, hostile names, binary xattrs): ustar headers with a correct checksum unless told
 * otherwise, pax records and GNU long names.
 */
final class TarBuilder {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    /** One ustar header; {@code size} as declared (the data written is {@code data}). */
    TarBuilder header(String name, char type, long size, int mode, long uid, long gid, long mtime, String link) {
        byte[] h = new byte[512];
        put(h, 0, 100, name);
        octal(h, 100, 8, mode);
        octal(h, 108, 8, uid);
        octal(h, 116, 8, gid);
        octal(h, 124, 12, size);
        octal(h, 136, 12, mtime);
        h[156] = (byte) type;
        put(h, 157, 100, link);
        put(h, 257, 6, "ustar");
        h[262] = 0;
        h[263] = '0';
        h[264] = '0';
        checksum(h);
        out.writeBytes(h);
        return this;
    }

    TarBuilder file(String name, byte[] data) {
        header(name, '0', data.length, 0644, 0, 0, 1_700_000_000L, "");
        return data(data);
    }

    TarBuilder dir(String name) {
        return header(name, '5', 0, 0755, 0, 0, 1_700_000_000L, "");
    }

    TarBuilder symlink(String name, String target) {
        return header(name, '2', 0, 0777, 0, 0, 1_700_000_000L, target);
    }

    TarBuilder device(String name, char type, int major, int minor) {
        int at = out.size();
        header(name, type, 0, 0600, 0, 0, 1_700_000_000L, "");
        byte[] all = out.toByteArray();
        byte[] h = Arrays.copyOfRange(all, at, at + 512);
        octal(h, 329, 8, major);
        octal(h, 337, 8, minor);
        checksum(h);
        out.reset();
        out.write(all, 0, at);
        out.writeBytes(h);
        return this;
    }

    /** A pax extended header ({@code x}) with these records, for the next member. */
    TarBuilder pax(Map<String, byte[]> records) {
        byte[] data = paxData(records);
        header("PaxHeaders/x", 'x', data.length, 0644, 0, 0, 0, "");
        return data(data);
    }

    TarBuilder paxText(Map<String, String> records) {
        var bytes = new LinkedHashMap<String, byte[]>();
        records.forEach((k, v) -> bytes.put(k, v.getBytes(StandardCharsets.UTF_8)));
        return pax(bytes);
    }

    /** A GNU long name ({@code L}) for the next member. */
    TarBuilder longName(String name) {
        byte[] data = (name + "\0").getBytes(StandardCharsets.UTF_8);
        header("././@LongLink", 'L', data.length, 0644, 0, 0, 0, "");
        return data(data);
    }

    /** Raw data, padded to a block. */
    TarBuilder data(byte[] data) {
        out.writeBytes(data);
        int pad = (512 - data.length % 512) % 512;
        out.writeBytes(new byte[pad]);
        return this;
    }

    TarBuilder end() {
        out.writeBytes(new byte[1024]);
        return this;
    }

    byte[] bytes() {
        return out.toByteArray();
    }

    static byte[] paxData(Map<String, byte[]> records) {
        var data = new ByteArrayOutputStream();
        records.forEach((key, value) -> {
            byte[] body = (" " + key + "=").getBytes(StandardCharsets.UTF_8);
            int len = body.length + value.length + 1;
            int digits = Integer.toString(len).length();
            if (Integer.toString(len + digits).length() != digits) digits++;
            data.writeBytes(Integer.toString(len + digits).getBytes(StandardCharsets.US_ASCII));
            data.writeBytes(body);
            data.writeBytes(value);
            data.write('\n');
        });
        return data.toByteArray();
    }

    /** Recomputes the checksum of the header at {@code at} (after a test changed its bytes). */
    static void checksum(byte[] archive, int at) {
        byte[] h = Arrays.copyOfRange(archive, at, at + 512);
        checksum(h);
        System.arraycopy(h, 0, archive, at, 512);
    }

    private static void checksum(byte[] h) {
        Arrays.fill(h, 148, 156, (byte) ' ');
        long sum = 0;
        for (byte b : h) sum += b & 0xff;
        byte[] digits = String.format("%06o", sum).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(digits, 0, h, 148, 6);
        h[154] = 0;
        h[155] = ' ';
    }

    private static void put(byte[] h, int at, int len, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(b, 0, h, at, Math.min(len, b.length));
    }

    private static void octal(byte[] h, int at, int len, long value) {
        String s = Long.toOctalString(value);
        if (s.length() > len - 1) throw new IllegalArgumentException(value + " does not fit " + len + " bytes of octal");
        put(h, at, len, "0".repeat(len - 1 - s.length()) + s);
    }
}
