package io.stasis.http1;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * A buffered stream that also reads HTTP/1.1 lines: the one input both proxies read messages from,
 * whatever their socket (a {@code java.net.Socket}, a TLS socket over the egress proxy's native
 * socket). Lines are found by scanning the buffer, so reading a head or a chunk-size line costs no
 * call per byte; bodies are read in blocks, straight into the caller's array when it is larger
 * than the buffer. What follows a message stays buffered for the next one (a kept-alive
 * connection) or for whoever reads on (a tunnel after 101). Not thread-safe: one reader at a time.
 */
public final class HttpInput extends InputStream {
    private static final int DEFAULT_BUFFER = 16 * 1024;

    private final InputStream in;
    private final byte[] buffer;
    private int position;
    private int limit;
    /** The current line's bytes when it spans more than one fill of the buffer. */
    private byte[] pending = new byte[0];

    public HttpInput(InputStream in) {
        this(in, DEFAULT_BUFFER);
    }

    public HttpInput(InputStream in, int bufferSize) {
        this.in = Objects.requireNonNull(in);
        this.buffer = new byte[bufferSize];
    }

    /**
     * The next line without its CRLF, its bytes as ISO-8859-1 characters (one char per byte);
     * null when the stream ends before the line's first byte. A line must end in CRLF: a bare LF
     * ends nothing and is refused (see the package's documentation), as is a CR anywhere else.
     *
     * @param maxLength the longest line accepted, without its CRLF
     * @param tooLong   the {@link HttpFramingException#status()} of a longer line
     * @param malformed the status of a bare LF or CR, or of the stream ending inside the line
     */
    String readLine(int maxLength, int tooLong, int malformed) throws IOException {
        int pendingLength = 0;
        while (true) {
            if (position == limit && !fill()) {
                if (pendingLength == 0) return null;
                throw new HttpFramingException(malformed, "the stream ended inside a line");
            }
            int lf = indexOfLf();
            int end = lf < 0 ? limit : lf;
            int length = pendingLength + end - position;
            // The line's CR is among these bytes until its LF comes.
            if (length > maxLength + 1) throw new HttpFramingException(tooLong, "a line longer than " + maxLength + " bytes");
            if (lf < 0) {
                if (pending.length < length) pending = Arrays.copyOf(pending, Math.max(length, Math.min(2 * pending.length + 64, maxLength + 1)));
                System.arraycopy(buffer, position, pending, pendingLength, end - position);
                pendingLength = length;
                position = limit;
                continue;
            }
            String line;
            if (pendingLength == 0) {
                line = new String(buffer, position, lf - position, StandardCharsets.ISO_8859_1);
            } else {
                if (pending.length < length) pending = Arrays.copyOf(pending, length);
                System.arraycopy(buffer, position, pending, pendingLength, lf - position);
                line = new String(pending, 0, length, StandardCharsets.ISO_8859_1);
            }
            position = lf + 1;
            int cr = line.indexOf('\r');
            if (line.length() - (cr == line.length() - 1 ? 1 : 0) > maxLength)
                throw new HttpFramingException(tooLong, "a line longer than " + maxLength + " bytes");
            if (cr < 0) throw new HttpFramingException(malformed, "a line ended by a bare LF");
            if (cr != line.length() - 1) throw new HttpFramingException(malformed, "a bare CR inside a line");
            return line.substring(0, cr);
        }
    }

    private int indexOfLf() {
        for (int i = position; i < limit; i++) if (buffer[i] == '\n') return i;
        return -1;
    }

    /** Reads more into the empty buffer; false at the end of the stream. */
    private boolean fill() throws IOException {
        int n = in.read(buffer, 0, buffer.length);
        if (n <= 0) return false;
        position = 0;
        limit = n;
        return true;
    }

    @Override
    public int read() throws IOException {
        if (position == limit && !fill()) return -1;
        return buffer[position++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (len == 0) return 0;
        if (position == limit) {
            if (len >= buffer.length) return in.read(b, off, len); // large reads skip the buffer
            if (!fill()) return -1;
        }
        int n = Math.min(len, limit - position);
        System.arraycopy(buffer, position, b, off, n);
        position += n;
        return n;
    }

    /** What can be read without blocking: the buffered bytes and what the stream below says it has. */
    @Override
    public int available() throws IOException {
        int buffered = limit - position;
        return buffered > 0 ? buffered : in.available();
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
