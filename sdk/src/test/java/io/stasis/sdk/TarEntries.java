package io.stasis.sdk;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * A small tar reader for tests, written from POSIX's description (not from {@link TarWriter}):
 * ustar headers with their checksum and prefix, and pax {@code x} headers' path and linkpath.
 */
final class TarEntries {
    record Entry(String name, char type, int mode, long uid, long gid, long mtime, String linkName, byte[] content) {
        String text() {
            return new String(content, StandardCharsets.UTF_8);
        }
    }

    private TarEntries() {
    }

    /** The entries of a plain or gzip'd archive, in order. */
    static List<Entry> read(byte[] archive) {
        try {
            InputStream in = new ByteArrayInputStream(archive);
            if (archive.length > 1 && (archive[0] & 0xff) == 0x1f && (archive[1] & 0xff) == 0x8b) in = new GZIPInputStream(in);
            return read(new DataInputStream(in));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Entry> read(DataInputStream in) throws IOException {
        var entries = new ArrayList<Entry>();
        Map<String, String> pax = new HashMap<>();
        byte[] header = new byte[512];
        while (true) {
            in.readFully(header);
            if (isZero(header)) {
                in.readFully(header);
                if (!isZero(header)) throw new IOException("a lone zero block");
                if (in.read() != -1) throw new IOException("data after the end of the archive");
                return entries;
            }
            long checksum = octal(header, 148, 8);
            long sum = 0;
            for (int i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? ' ' : header[i] & 0xff;
            if (sum != checksum) throw new IOException("bad header checksum " + checksum + ", computed " + sum);
            if (!text(header, 257, 6).equals("ustar")) throw new IOException("not a ustar header: " + text(header, 257, 6));
            char type = (char) header[156];
            long size = octal(header, 124, 12);
            byte[] content = new byte[(int) size];
            in.readFully(content);
            int padding = (int) ((512 - size % 512) % 512);
            if (in.skipBytes(padding) != padding) throw new EOFException();
            if (type == 'x') {
                pax = records(new String(content, StandardCharsets.UTF_8));
                continue;
            }
            String prefix = text(header, 345, 155);
            String name = (prefix.isEmpty() ? "" : prefix + "/") + text(header, 0, 100);
            String link = text(header, 157, 100);
            entries.add(new Entry(pax.getOrDefault("path", name), type, (int) octal(header, 100, 8), octal(header, 108, 8),
                    octal(header, 116, 8), octal(header, 136, 12), pax.getOrDefault("linkpath", link), content));
            pax = new HashMap<>();
        }
    }

    /** {@code "<length> key=value\n"} records, each length checked. */
    private static Map<String, String> records(String data) throws IOException {
        var out = new HashMap<String, String>();
        byte[] bytes = data.getBytes(StandardCharsets.UTF_8);
        int at = 0;
        while (at < bytes.length) {
            int space = at;
            while (bytes[space] != ' ') space++;
            int length = Integer.parseInt(new String(bytes, at, space - at, StandardCharsets.US_ASCII));
            if (bytes[at + length - 1] != '\n') throw new IOException("a pax record's length is wrong: " + length);
            String record = new String(bytes, space + 1, at + length - space - 2, StandardCharsets.UTF_8);
            int eq = record.indexOf('=');
            out.put(record.substring(0, eq), record.substring(eq + 1));
            at += length;
        }
        return out;
    }

    private static boolean isZero(byte[] block) {
        for (byte b : block) if (b != 0) return false;
        return true;
    }

    private static String text(byte[] h, int offset, int length) {
        int end = offset;
        while (end < offset + length && h[end] != 0) end++;
        return new String(h, offset, end - offset, StandardCharsets.UTF_8);
    }

    private static long octal(byte[] h, int offset, int length) {
        String digits = text(h, offset, length).strip();
        return digits.isEmpty() ? 0 : Long.parseLong(digits, 8);
    }
}
