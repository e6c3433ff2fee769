package io.stasis.http1;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Copies one message body from a sender to a receiver, exactly as framed and not a byte further,
 * so that the next message on a kept-alive connection starts where it should. Flushes whenever the
 * sender has nothing more ready: a streamed response (Server-Sent Events, a slow download, a chunk
 * at a time) reaches the receiver as the sender writes it, while a large body already waiting goes
 * out in large writes. A chunked body stays chunked, re-framed: each chunk-size line is written
 * anew in plain hexadecimal (extensions dropped), each trailer field as {@code name: value}.
 */
public final class BodyRelay {
    private static final int BUFFER = 64 * 1024;
    /** The longest chunk-size line accepted, extensions included. */
    public static final int MAX_CHUNK_LINE = 4096;
    private static final byte[] CRLF = {'\r', '\n'};

    private BodyRelay() {
    }

    /**
     * Relays the body and flushes {@code out}.
     *
     * @param faultStatus the status a framing fault carries: 400 for a client's body, 502 for a server's
     */
    public static void copy(BodyFraming framing, HttpInput in, OutputStream out, int faultStatus) throws IOException {
        switch (framing) {
            case BodyFraming.None none -> {
            }
            case BodyFraming.Length length -> copyExactly(in, out, length.length(), new byte[(int) Math.min(BUFFER, length.length())], faultStatus);
            case BodyFraming.Chunked chunked -> copyChunked(in, out, faultStatus);
            case BodyFraming.UntilClose untilClose -> copyUntilClose(in, out);
        }
        out.flush();
    }

    /** Everything {@code in} has until its end, as it arrives: the body that runs until close, or a tunnel after 101. */
    public static void copyUntilClose(HttpInput in, OutputStream out) throws IOException {
        byte[] buffer = new byte[BUFFER];
        for (int n; (n = in.read(buffer)) >= 0; ) {
            out.write(buffer, 0, n);
            flushIfIdle(in, out);
        }
        out.flush();
    }

    private static void copyExactly(HttpInput in, OutputStream out, long length, byte[] buffer, int faultStatus) throws IOException {
        long left = length;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) throw new HttpFramingException(faultStatus, "the body ended " + left + " bytes short of its length");
            out.write(buffer, 0, n);
            left -= n;
            flushIfIdle(in, out);
        }
    }

    /** Flushes unless more of the body is ready to read at once (it then joins this write). */
    private static void flushIfIdle(HttpInput in, OutputStream out) throws IOException {
        if (in.available() == 0) out.flush();
    }

    private static void copyChunked(HttpInput in, OutputStream out, int faultStatus) throws IOException {
        byte[] buffer = null;
        while (true) {
            long size = chunkSize(readLine(in, MAX_CHUNK_LINE, faultStatus), faultStatus);
            out.write((Long.toHexString(size) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            if (size == 0) break;
            if (buffer == null) buffer = new byte[BUFFER];
            copyExactly(in, out, size, buffer, faultStatus);
            if (!readLine(in, MAX_CHUNK_LINE, faultStatus).isEmpty()) throw new HttpFramingException(faultStatus, "a chunk is longer than its size");
            out.write(CRLF);
            flushIfIdle(in, out);
        }
        var trailers = new HttpHeaders();
        int trailerBytes = 0;
        while (true) {
            String line = readLine(in, HeadReader.MAX_LINE_BYTES, faultStatus);
            if (line.isEmpty()) break;
            trailerBytes += line.length() + 2;
            if (trailerBytes > HeadReader.MAX_HEAD_BYTES || trailers.size() >= HeadReader.MAX_FIELDS)
                throw new HttpFramingException(faultStatus, "the trailer section is too large");
            HeadReader.checkCharacters(line, faultStatus);
            HeadReader.addField(trailers, line, faultStatus);
        }
        var end = new StringBuilder();
        trailers.appendTo(end);
        out.write(end.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
    }

    /**
     * The size of a chunk-size line: 1 to 15 hexadecimal digits, then nothing or extensions after
     * a semicolon (optional whitespace before it, RFC 9112 section 7.1.1). Extensions are not read.
     */
    static long chunkSize(String line, int faultStatus) throws HttpFramingException {
        int digits = 0;
        while (digits < line.length() && Character.digit(line.charAt(digits), 16) >= 0 && line.charAt(digits) < 0x80) digits++;
        int rest = digits;
        while (rest < line.length() && (line.charAt(rest) == ' ' || line.charAt(rest) == '\t')) rest++;
        if (digits == 0 || digits > 15 || (rest < line.length() && line.charAt(rest) != ';') || (rest > digits && rest == line.length()))
            throw new HttpFramingException(faultStatus, "a malformed chunk size line");
        return Long.parseLong(line, 0, digits, 16);
    }

    private static String readLine(HttpInput in, int maxLength, int faultStatus) throws IOException {
        String line = in.readLine(maxLength, faultStatus, faultStatus);
        if (line == null) throw new HttpFramingException(faultStatus, "the chunked body ended early");
        return line;
    }
}
