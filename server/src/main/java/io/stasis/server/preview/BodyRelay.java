package io.stasis.server.preview;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Copies one message body from a sender to a receiver, exactly as framed and not a byte further,
 * so that the next message on a kept-alive connection starts where it should. Flushes whenever the
 * sender has nothing more ready, and after every chunk: a streamed response (Server-Sent Events, a
 * slow download) reaches the client as the upstream writes it, while a large body already waiting
 * goes out in large writes. Chunked bodies stay chunked, with the chunk-size lines
 * rewritten in plain form (extensions dropped).
 */
final class BodyRelay {
    private static final int BUFFER = 64 * 1024;
    /** A chunk-size line or a trailer field longer than this is refused. */
    static final int MAX_LINE = 4096;

    private BodyRelay() {
    }

    /** Relays the body; {@code faultStatus} is the status a framing fault carries (400 from a client, 502 from an upstream). */
    static void copy(BodyFraming framing, InputStream in, OutputStream out, int faultStatus) throws IOException, HttpFramingException {
        switch (framing) {
            case BodyFraming.None none -> {
            }
            case BodyFraming.Length length -> copyExactly(in, out, length.length(), faultStatus);
            case BodyFraming.Chunked chunked -> copyChunked(in, out, faultStatus);
            case BodyFraming.UntilClose untilClose -> {
                byte[] buffer = new byte[BUFFER];
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    out.write(buffer, 0, n);
                    flushIfIdle(in, out);
                }
            }
        }
    }

    private static void copyExactly(InputStream in, OutputStream out, long length, int faultStatus)
            throws IOException, HttpFramingException {
        byte[] buffer = new byte[(int) Math.min(BUFFER, Math.max(length, 1))];
        long left = length;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) throw new HttpFramingException(faultStatus, "the body ended " + left + " bytes short of its length");
            out.write(buffer, 0, n);
            left -= n;
            if (left > 0) flushIfIdle(in, out);
        }
        out.flush();
    }

    /** Flushes unless more of the body is ready to read at once (it then joins this write). */
    private static void flushIfIdle(InputStream in, OutputStream out) throws IOException {
        if (in.available() == 0) out.flush();
    }

    private static void copyChunked(InputStream in, OutputStream out, int faultStatus) throws IOException, HttpFramingException {
        while (true) {
            String line = readLine(in, faultStatus);
            int semicolon = line.indexOf(';');
            String hex = (semicolon < 0 ? line : line.substring(0, semicolon)).strip();
            if (hex.isEmpty() || hex.length() > 15 || !hex.chars().allMatch(c -> Character.digit(c, 16) >= 0))
                throw new HttpFramingException(faultStatus, "malformed chunk size '" + line + "'");
            long size = Long.parseLong(hex, 16);
            out.write((Long.toHexString(size) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            if (size == 0) break;
            copyExactly(in, out, size, faultStatus);
            if (!readLine(in, faultStatus).isEmpty()) throw new HttpFramingException(faultStatus, "a chunk is longer than its size");
            out.write('\r');
            out.write('\n');
            out.flush();
        }
        int trailerBytes = 0;
        while (true) {
            String field = readLine(in, faultStatus);
            trailerBytes += field.length() + 2;
            if (trailerBytes > HeadReader.MAX_HEAD_BYTES) throw new HttpFramingException(faultStatus, "the trailer section is too large");
            out.write((field + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            if (field.isEmpty()) break;
        }
        out.flush();
    }

    /** A line ended by CRLF (or a bare LF), without its end. */
    private static String readLine(InputStream in, int faultStatus) throws IOException, HttpFramingException {
        var line = new StringBuilder();
        while (true) {
            int b = in.read();
            if (b < 0) throw new HttpFramingException(faultStatus, "the chunked body ended early");
            if (b == '\n') break;
            if (line.length() >= MAX_LINE) throw new HttpFramingException(faultStatus, "a chunk line is too long");
            line.append((char) b);
        }
        int end = line.length();
        if (end > 0 && line.charAt(end - 1) == '\r') line.setLength(end - 1);
        if (line.indexOf("\r") >= 0) throw new HttpFramingException(faultStatus, "a bare CR in a chunk line");
        return line.toString();
    }
}
