package io.stasis.server.s3;

import java.util.regex.Pattern;

/**
 * What a GET's {@code Range} header asks of an object of a known size, as S3 reads it: one range
 * of bytes ({@code bytes=first-last}, {@code bytes=first-}, {@code bytes=-suffix}); a last byte past
 * the end is cut to the end. A header S3 would ignore (another unit, several ranges, not a range at
 * all) asks for the whole object.
 */
sealed interface ByteRange {
    Pattern SINGLE = Pattern.compile("bytes=(\\d*)-(\\d*)");

    /** The whole object, with status 200. */
    record Whole() implements ByteRange {
    }

    /** Bytes {@code first} to {@code last} inclusive, with status 206 and a Content-Range. */
    record Slice(long first, long last, long size) implements ByteRange {
        long length() {
            return last - first + 1;
        }

        String contentRange() {
            return "bytes " + first + "-" + last + "/" + size;
        }
    }

    /** A range that starts past the end (or an empty suffix): status 416 InvalidRange. */
    record Unsatisfiable(long size) implements ByteRange {
        String contentRange() {
            return "bytes */" + size;
        }
    }

    static ByteRange of(String header, long size) {
        if (header == null) return new Whole();
        var m = SINGLE.matcher(header.strip());
        if (!m.matches()) return new Whole();
        String from = m.group(1);
        String to = m.group(2);
        if (from.isEmpty()) {
            if (to.isEmpty()) return new Whole();
            long suffix = saturated(to);
            if (suffix == 0 || size == 0) return new Unsatisfiable(size);
            return new Slice(Math.max(0, size - suffix), size - 1, size);
        }
        long first = saturated(from);
        if (!to.isEmpty() && saturated(to) < first) return new Whole(); // syntactically invalid: ignored, as RFC 9110 says
        if (first >= size) return new Unsatisfiable(size);
        long last = to.isEmpty() ? size - 1 : Math.min(saturated(to), size - 1);
        return new Slice(first, last, size);
    }

    /** Decimal digits as a long, Long.MAX_VALUE past it (a position that large is past any end). */
    private static long saturated(String digits) {
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }
}
