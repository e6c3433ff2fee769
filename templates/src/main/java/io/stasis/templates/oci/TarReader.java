package io.stasis.templates.oci;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Reads a tar archive as a stream, one member at a time: POSIX ustar, GNU (long names and links
 * in {@code L}/{@code K} members, base-256 numbers) and pax ({@code x} and {@code g} extended
 * headers with {@code path}, {@code linkpath}, {@code size}, {@code uid}, {@code gid},
 * {@code mtime} and {@code SCHILY.xattr.*}). Regular files, directories, symlinks, hard links,
 * character and block devices and FIFOs are reported as they are; judging them is the caller's job.
 *
 * <p>Bounded: a name or link longer than {@value #MAX_NAME_BYTES} bytes, extended headers of
 * one member over {@value #MAX_PAX_BYTES} bytes in all, and a member larger than the size limit
 * are refused before anything of them is buffered. Everything wrong with the bytes (a bad
 * checksum, a number that is not one, a name that is not UTF-8, an archive cut short, a GNU
 * sparse file) and every read failure of the underlying stream is an {@link ImageException}
 * naming the member or the header's offset; nothing else is thrown. Global ({@code g}) headers
 * apply their {@code uid}, {@code gid}, {@code mtime} and xattrs to all later members; a
 * {@code path}, {@code linkpath} or {@code size} in them is ignored (they cannot mean one member).
 *
 * <p>Not thread-safe. The reader does not close the stream it was given.
 */
public final class TarReader {
    /** The longest name or link target accepted, in bytes (PATH_MAX). */
    public static final int MAX_NAME_BYTES = 4096;
    /** The most bytes of pax extended headers one member may have, global ones counted separately. */
    public static final int MAX_PAX_BYTES = 1 << 20;
    /** The largest member accepted unless the caller says otherwise. */
    public static final long DEFAULT_MAX_ENTRY_SIZE = 64L << 30;

    private static final int BLOCK = 512;
    private static final String XATTR_PREFIX = "SCHILY.xattr.";

    private final InputStream in;
    private final long maxEntrySize;
    private final byte[] header = new byte[BLOCK];
    private final byte[] scratch = new byte[64 * 1024];
    /** From {@code g} headers: applies to every later member. */
    private final Pax global = new Pax();
    private long globalBytes;

    /** Bytes consumed from {@link #in} so far. */
    private long offset;
    /** Data bytes of the current member not read yet, then its padding. */
    private long remaining;
    private long padding;
    private String current = "";
    private boolean finished;

    public TarReader(InputStream in) {
        this(in, DEFAULT_MAX_ENTRY_SIZE);
    }

    /** @param maxEntrySize the largest member (of any kind, extended headers aside) accepted */
    public TarReader(InputStream in, long maxEntrySize) {
        if (maxEntrySize < 0) throw new IllegalArgumentException("maxEntrySize must be >= 0");
        this.in = in;
        this.maxEntrySize = maxEntrySize;
    }

    /**
     * The next member, skipping what is left of the current one; empty at the end of the archive
     * (a zero block, or the stream ending where a header would start).
     */
    public Optional<TarEntry> next() {
        if (finished) return Optional.empty();
        skip(remaining + padding, current);
        remaining = 0;
        padding = 0;
        var local = new Pax();
        long localBytes = 0;
        String longName = null;
        String longLink = null;
        boolean extended = false;
        while (true) {
            long headerOffset = offset;
            String where = "tar header at byte " + headerOffset;
            int n = readFully(header, 0, BLOCK, where);
            if (n == 0 || (n == BLOCK && isZero(header))) {
                if (extended) throw ImageException.malformed(where, "the archive ends after an extended header, without its member");
                finished = true;
                return Optional.empty();
            }
            if (n < BLOCK) throw ImageException.malformed(where, "the archive ends inside a header (" + n + " of 512 bytes)");
            verifyChecksum(where);
            byte type = header[156];
            long size = number(124, 12, "size", where);
            if (size < 0) throw ImageException.malformed(where, "negative size " + size);
            switch (type) {
                case 'L' -> {
                    longName = cString(metaData(size, MAX_NAME_BYTES + 1L, "a GNU long name", where), "GNU long name", where);
                    extended = true;
                }
                case 'K' -> {
                    longLink = cString(metaData(size, MAX_NAME_BYTES + 1L, "a GNU long link", where), "GNU long link", where);
                    extended = true;
                }
                case 'x' -> {
                    checkPaxSize(size, localBytes, "a pax header", where);
                    localBytes += size;
                    local.parse(metaData(size, MAX_PAX_BYTES, "a pax header", where), where, false);
                    extended = true;
                }
                case 'g' -> {
                    checkPaxSize(size, globalBytes, "a global pax header", where);
                    globalBytes += size;
                    global.parse(metaData(size, MAX_PAX_BYTES, "a global pax header", where), where, true);
                }
                default -> {
                    return Optional.of(member(type, size, local, longName, longLink, where));
                }
            }
        }
    }

    /**
     * The data of the current member (a regular file's content; other kinds normally have none),
     * read from the archive as it is consumed. Valid until {@link #next()}; a stream cut short throws
     * {@link ImageException}.
     */
    public InputStream content() {
        return new Content();
    }

    // --- one member ---

    private TarEntry member(byte type, long headerSize, Pax local, String longName, String longLink, String where) {
        boolean ustar = isUstar();
        boolean gnu = isGnu();
        String name = local.path != null ? local.path : longName != null ? longName : headerName(ustar, where);
        if (name.isEmpty()) throw ImageException.malformed(where, "a member without a name");
        checkNameLength(name, "name", where);
        String subject = "tar entry '" + name + "'";
        String link = local.linkpath != null ? local.linkpath : longLink != null ? longLink : string(157, 100, "link name", subject);
        checkNameLength(link, "link target", subject);
        long size = local.size != null ? local.size : headerSize;
        if (size > maxEntrySize) throw tooLarge(subject, size + " bytes, over the limit of " + maxEntrySize);
        if (local.sparse || global.sparse) throw ImageException.unsupported(subject, "GNU sparse files are not supported");

        int mode = (int) (number(100, 8, "mode", subject) & 07777);
        long uid = first(local.uid, global.uid, () -> number(108, 8, "uid", subject));
        long gid = first(local.gid, global.gid, () -> number(116, 8, "gid", subject));
        if (uid < 0 || gid < 0) throw ImageException.malformed(subject, "negative owner " + uid + ":" + gid);
        Instant mtime = local.mtime != null ? local.mtime : global.mtime != null ? global.mtime
                : instant(number(136, 12, "mtime", subject), subject);
        var xattrs = new HashMap<>(global.xattrs);
        xattrs.putAll(local.xattrs);
        boolean devices = ustar || gnu;

        TarEntry.Kind kind = switch (type) {
            case '0', 0, '7' -> name.endsWith("/") && type == 0 ? new TarEntry.Directory() : new TarEntry.RegularFile(size);
            case '1' -> new TarEntry.HardLink(requireLink(link, subject));
            case '2' -> new TarEntry.Symlink(requireLink(link, subject));
            case '3' -> new TarEntry.CharDevice(devices ? number(329, 8, "devmajor", subject) : 0, devices ? number(337, 8, "devminor", subject) : 0);
            case '4' -> new TarEntry.BlockDevice(devices ? number(329, 8, "devmajor", subject) : 0, devices ? number(337, 8, "devminor", subject) : 0);
            case '5' -> new TarEntry.Directory();
            case '6' -> new TarEntry.Fifo();
            case 'S' -> throw ImageException.unsupported(subject, "GNU sparse files are not supported");
            default -> throw ImageException.unsupported(subject, "member type '" + printable(type) + "' is not supported");
        };
        current = subject;
        remaining = size;
        padding = pad(size);
        return new TarEntry(name, kind, mode, uid, gid, mtime, xattrs);
    }

    private String headerName(boolean ustar, String where) {
        String name = string(0, 100, "name", where);
        if (!ustar) return name;
        String prefix = string(345, 155, "prefix", where);
        return prefix.isEmpty() ? name : prefix + "/" + name;
    }

    private static String requireLink(String link, String subject) {
        if (link.isEmpty()) throw ImageException.malformed(subject, "a link without a target");
        return link;
    }

    private static void checkNameLength(String value, String what, String subject) {
        if (value.length() > MAX_NAME_BYTES || value.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES)
            throw tooLarge(subject, "a " + what + " longer than " + MAX_NAME_BYTES + " bytes");
    }

    // --- the header block ---

    private boolean isUstar() {
        return header[257] == 'u' && header[258] == 's' && header[259] == 't' && header[260] == 'a' && header[261] == 'r'
                && header[262] == 0;
    }

    private boolean isGnu() {
        return header[257] == 'u' && header[258] == 's' && header[259] == 't' && header[260] == 'a' && header[261] == 'r'
                && header[262] == ' ';
    }

    private void verifyChecksum(String where) {
        long stored = number(148, 8, "checksum", where);
        long unsigned = 0;
        long signed = 0;
        for (int i = 0; i < BLOCK; i++) {
            boolean field = i >= 148 && i < 156;
            unsigned += field ? ' ' : header[i] & 0xff;
            signed += field ? ' ' : header[i];
        }
        if (stored != unsigned && stored != signed)
            throw ImageException.malformed(where, "header checksum mismatch (stored " + stored + ", computed " + unsigned
                    + "): not a tar archive, or a damaged one");
    }

    /** An octal field (leading spaces, ended by NUL or space), or GNU base-256 when its first byte has the high bit. */
    private long number(int at, int length, String field, String where) {
        if ((header[at] & 0x80) != 0) { // base-256, two's complement when negative (as Go's archive/tar reads it)
            int invert = (header[at] & 0x40) != 0 ? 0xff : 0;
            long value = 0;
            for (int i = 0; i < length; i++) {
                int b = (header[at + i] & 0xff) ^ invert;
                if (i == 0) b &= 0x7f;
                if ((value >>> 55) != 0) throw ImageException.malformed(where, field + " is out of range");
                value = (value << 8) | b;
            }
            return invert == 0 ? value : ~value;
        }
        int i = at;
        int end = at + length;
        while (i < end && header[i] == ' ') i++;
        long value = 0;
        boolean digits = false;
        for (; i < end; i++) {
            byte b = header[i];
            if (b == 0 || b == ' ') break;
            if (b < '0' || b > '7') throw ImageException.malformed(where, field + " is not an octal number");
            value = value * 8 + (b - '0');
            digits = true;
        }
        for (; i < end; i++)
            if (header[i] != 0 && header[i] != ' ') throw ImageException.malformed(where, field + " is not an octal number");
        return digits ? value : 0;
    }

    /** A NUL-terminated UTF-8 field. */
    private String string(int at, int length, String field, String where) {
        int end = at;
        while (end < at + length && header[end] != 0) end++;
        return utf8(header, at, end - at, field, where);
    }

    // --- extended header data ---

    private byte[] metaData(long size, long limit, String what, String where) {
        if (size > limit) throw tooLarge(where, what + " of " + size + " bytes, over the limit of " + limit);
        byte[] data = new byte[(int) size];
        int n = readFully(data, 0, data.length, where);
        if (n < data.length) throw ImageException.malformed(where, "the archive ends inside " + what);
        skip(pad(size), where);
        return data;
    }

    private static void checkPaxSize(long size, long before, String what, String where) {
        if (size > MAX_PAX_BYTES - before)
            throw tooLarge(where, what + " of " + size + " bytes" + (before > 0 ? " after " + before + " bytes of others" : "")
                    + ": over the limit of " + MAX_PAX_BYTES);
    }

    private static String cString(byte[] data, String field, String where) {
        int end = 0;
        while (end < data.length && data[end] != 0) end++;
        String value = utf8(data, 0, end, field, where);
        if (value.length() > MAX_NAME_BYTES || end > MAX_NAME_BYTES) throw tooLarge(where, "a " + field + " longer than " + MAX_NAME_BYTES + " bytes");
        return value;
    }

    /** The values of pax records (POSIX.1-2001 {@code "%d %s=%s\n"}) this reader uses. */
    private static final class Pax {
        String path;
        String linkpath;
        Long size;
        Long uid;
        Long gid;
        Instant mtime;
        boolean sparse;
        final Map<String, byte[]> xattrs = new HashMap<>();

        void parse(byte[] data, String where, boolean global) {
            int at = 0;
            while (at < data.length) {
                if (data[at] == 0) break; // NUL padding some writers leave at the end
                int space = at;
                while (space < data.length && space - at < 8 && data[space] >= '0' && data[space] <= '9') space++;
                if (space == at || space >= data.length || data[space] != ' ')
                    throw ImageException.malformed(where, "a pax record without a length at byte " + at + " of the header");
                int length = Integer.parseInt(new String(data, at, space - at, StandardCharsets.US_ASCII));
                int end = at + length;
                if (length <= space - at + 1 || end > data.length || data[end - 1] != '\n')
                    throw ImageException.malformed(where, "a pax record of a wrong length at byte " + at + " of the header");
                int equals = space + 1;
                while (equals < end - 1 && data[equals] != '=') equals++;
                if (equals >= end - 1 || equals == space + 1)
                    throw ImageException.malformed(where, "a pax record without key=value at byte " + at + " of the header");
                String key = utf8(data, space + 1, equals - space - 1, "pax key", where);
                byte[] value = Arrays.copyOfRange(data, equals + 1, end - 1);
                apply(key, value, where, global);
                at = end;
            }
        }

        private void apply(String key, byte[] value, String where, boolean global) {
            if (key.startsWith(XATTR_PREFIX) && key.length() > XATTR_PREFIX.length()) {
                xattrs.put(key.substring(XATTR_PREFIX.length()), value);
                return;
            }
            if (key.startsWith("GNU.sparse.")) {
                sparse = true;
                return;
            }
            boolean unset = value.length == 0; // an empty value reverts to the header's
            switch (key) {
                case "path" -> {
                    if (!global) path = unset ? null : paxName(value, key, where);
                }
                case "linkpath" -> {
                    if (!global) linkpath = unset ? null : paxName(value, key, where);
                }
                case "size" -> {
                    if (!global) size = unset ? null : decimal(value, key, where);
                }
                case "uid" -> uid = unset ? null : decimal(value, key, where);
                case "gid" -> gid = unset ? null : decimal(value, key, where);
                case "mtime" -> mtime = unset ? null : seconds(value, where);
                default -> {
                    // atime, ctime, uname, gname, comment, charset...: nothing a root filesystem needs
                }
            }
        }

        private static String paxName(byte[] value, String key, String where) {
            String name = utf8(value, 0, value.length, "pax " + key, where);
            if (name.indexOf('\0') >= 0) throw ImageException.malformed(where, "pax " + key + " contains NUL");
            return name;
        }

        private static long decimal(byte[] value, String key, String where) {
            if (value.length > 18) throw ImageException.malformed(where, "pax " + key + " is out of range");
            long v = 0;
            for (byte b : value) {
                if (b < '0' || b > '9') throw ImageException.malformed(where, "pax " + key + " is not a decimal number");
                v = v * 10 + (b - '0');
            }
            return v;
        }

        /** {@code [-]seconds[.fraction]}. */
        private static Instant seconds(byte[] value, String where) {
            String text = new String(value, StandardCharsets.US_ASCII);
            if (!text.matches("-?[0-9]{1,15}(\\.[0-9]{0,30})?"))
                throw ImageException.malformed(where, "pax mtime '" + printable(text) + "' is not a time");
            int dot = text.indexOf('.');
            long whole = Long.parseLong(dot < 0 ? text : text.substring(0, dot));
            String fraction = dot < 0 ? "" : text.substring(dot + 1);
            long nanos = fraction.isEmpty() ? 0 : Long.parseLong((fraction + "000000000").substring(0, 9));
            boolean negative = text.startsWith("-");
            return Instant.ofEpochSecond(whole, negative ? -nanos : nanos);
        }
    }

    // --- the stream ---

    private final class Content extends InputStream {
        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) == 1 ? one[0] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (len == 0) return 0;
            if (remaining == 0) return -1;
            int n = readSome(b, off, (int) Math.min(len, remaining), current);
            if (n <= 0) throw ImageException.malformed(current, "the archive ends inside this member (" + remaining + " bytes missing)");
            remaining -= n;
            return n;
        }

        @Override
        public long skip(long n) {
            long done = Math.min(Math.max(0, n), remaining);
            TarReader.this.skip(done, current);
            remaining -= done;
            return done;
        }

        @Override
        public int available() {
            return 0;
        }
    }

    private void skip(long count, String where) {
        while (count > 0) {
            int n = readSome(scratch, 0, (int) Math.min(scratch.length, count), where);
            if (n <= 0) throw ImageException.malformed(where, "the archive ends inside this member");
            count -= n;
        }
    }

    /** Reads up to {@code len} bytes, fewer only at the end of the stream; returns how many. */
    private int readFully(byte[] b, int off, int len, String where) {
        int done = 0;
        while (done < len) {
            int n = readSome(b, off + done, len - done, where);
            if (n <= 0) break;
            done += n;
        }
        return done;
    }

    private int readSome(byte[] b, int off, int len, String where) {
        try {
            int n = in.read(b, off, len);
            if (n > 0) offset += n;
            return n;
        } catch (ImageException e) {
            throw e;
        } catch (IOException e) {
            throw ImageException.io(where, "reading the archive failed: " + e.getMessage(), e);
        }
    }

    // --- small helpers ---

    private static long pad(long size) {
        return (BLOCK - size % BLOCK) % BLOCK;
    }

    private static boolean isZero(byte[] block) {
        for (byte b : block) if (b != 0) return false;
        return true;
    }

    private static long first(Long local, Long global, java.util.function.LongSupplier header) {
        return local != null ? local : global != null ? global : header.getAsLong();
    }

    private static Instant instant(long seconds, String subject) {
        try {
            return Instant.ofEpochSecond(seconds);
        } catch (java.time.DateTimeException e) {
            throw ImageException.malformed(subject, "mtime " + seconds + " is out of range");
        }
    }

    private static String utf8(byte[] bytes, int off, int len, String field, String where) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes, off, len)).toString();
        } catch (CharacterCodingException e) {
            throw ImageException.unsupported(where, field + " is not UTF-8 (such names are not supported)");
        }
    }

    private static String printable(byte b) {
        return b >= 0x20 && b < 0x7f ? Character.toString(b) : String.format("\\x%02x", b & 0xff);
    }

    private static String printable(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }

    private static ImageException tooLarge(String subject, String problem) {
        return ImageException.tooLarge(subject, problem);
    }
}
