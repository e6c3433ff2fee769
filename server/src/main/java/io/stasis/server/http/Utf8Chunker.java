package io.stasis.server.http;

import java.io.ByteArrayOutputStream;
import java.util.Arrays;

/**
 * Splits a byte stream into chunks that end on UTF-8 character boundaries, holding back an
 * incomplete trailing character until its remaining bytes arrive, so that text streams out as text.
 */
final class Utf8Chunker {
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

    /** Appends {@code data} and returns what can be sent now (possibly empty). */
    byte[] push(byte[] data) {
        pending.writeBytes(data);
        byte[] all = pending.toByteArray();
        int cut = completeLength(all);
        pending.reset();
        pending.write(all, cut, all.length - cut);
        return Arrays.copyOf(all, cut);
    }

    /** Whether nothing is held back. */
    boolean isEmpty() {
        return pending.size() == 0;
    }

    /** Everything still held back. */
    byte[] flush() {
        byte[] rest = pending.toByteArray();
        pending.reset();
        return rest;
    }

    /** The length of the longest prefix that does not end inside a multi-byte character. */
    static int completeLength(byte[] b) {
        int n = b.length;
        for (int back = 1; back <= Math.min(3, n); back++) {
            int c = b[n - back] & 0xff;
            if ((c & 0xC0) == 0x80) continue; // continuation byte: look further back for the lead byte
            int need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
            return need > back ? n - back : n;
        }
        return n;
    }
}
