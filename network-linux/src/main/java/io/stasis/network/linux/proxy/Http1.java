package io.stasis.network.linux.proxy;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * HTTP/1.1 message framing on a decrypted stream, strict enough that a kept-alive connection stays
 * in step: heads end at the first CRLF CRLF (bare LF refused), bodies are framed by chunked
 * transfer coding or Content-Length (both at once, several differing lengths, or a request coding
 * not ending in chunked are refused, the usual request-smuggling ambiguities), chunked bodies are copied verbatim with their
 * trailers. Used by {@link InterceptingCarrier}; nothing here logs header values.
 */
final class Http1 {
    static final int MAX_HEAD_BYTES = 64 * 1024;
    private static final int MAX_CHUNK_LINE = 4096;
    private static final int COPY_BUFFER = 16 * 1024;

    private Http1() {
    }

    /** The message does not follow HTTP/1.1 framing; the connection cannot continue. */
    static final class FramingException extends IOException {
        FramingException(String message) {
            super(message);
        }
    }

    /** How a message's body is delimited. */
    sealed interface Body permits None, Fixed, Chunked, UntilClose {
    }

    record None() implements Body {
    }

    record Fixed(long length) implements Body {
    }

    record Chunked() implements Body {
    }

    /** Responses only: everything until the server closes. */
    record UntilClose() implements Body {
    }

    /** A start line and its header fields, in order, names as sent. */
    record Head(String startLine, List<Map.Entry<String, String>> fields) {
        Head {
            fields = List.copyOf(fields);
        }

        /** The values of every field named {@code name} (case-insensitive). */
        List<String> values(String name) {
            return fields.stream().filter(f -> f.getKey().equalsIgnoreCase(name)).map(Map.Entry::getValue).toList();
        }

        Optional<String> value(String name) {
            var all = values(name);
            return all.isEmpty() ? Optional.empty() : Optional.of(all.getFirst());
        }

        /** A request's method. */
        String method() {
            int sp = startLine.indexOf(' ');
            return sp < 0 ? startLine : startLine.substring(0, sp);
        }

        /** A response's status code. */
        int status() throws FramingException {
            String[] parts = startLine.split(" ", 3);
            if (parts.length < 2 || !parts[0].startsWith("HTTP/1.") || !parts[1].matches("[1-9][0-9]{2}"))
                throw new FramingException("not an HTTP/1.x status line");
            return Integer.parseInt(parts[1]);
        }

        /** This head with {@code set} replacing every field of the same names (case-insensitive), added at the end. */
        Head with(Map<String, String> set) {
            var kept = new ArrayList<Map.Entry<String, String>>();
            for (var f : fields) if (set.keySet().stream().noneMatch(n -> n.equalsIgnoreCase(f.getKey()))) kept.add(f);
            set.forEach((n, v) -> kept.add(Map.entry(n, v)));
            return new Head(startLine, kept);
        }

        byte[] bytes() {
            var sb = new StringBuilder(startLine).append("\r\n");
            for (var f : fields) sb.append(f.getKey()).append(": ").append(f.getValue()).append("\r\n");
            return sb.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
        }

        /** For logs: the start line and field names, never values. */
        @Override
        public String toString() {
            return startLine + " " + fields.stream().map(Map.Entry::getKey).toList();
        }
    }

    /**
     * Reads one head. Returns empty at a clean end of stream before its first byte (the peer closed
     * between messages).
     */
    static Optional<Head> readHead(InputStream in) throws IOException {
        var bytes = new ByteArrayOutputStream(512);
        int matched = 0; // of CR LF CR LF
        while (true) {
            int b = in.read();
            if (b < 0) {
                if (bytes.size() == 0) return Optional.empty();
                throw new EOFException("the stream ended inside a message head");
            }
            if (bytes.size() == 0 && matched == 0 && (b == '\r' || b == '\n')) {
                // RFC 9112 2.2: a server should ignore at least one empty line before a request
                if (b == '\n') continue;
                matched = -1;
                continue;
            }
            if (matched == -1) {
                if (b != '\n') throw new FramingException("a bare CR before the start line");
                matched = 0;
                continue;
            }
            bytes.write(b);
            if (bytes.size() > MAX_HEAD_BYTES) throw new FramingException("a message head longer than " + MAX_HEAD_BYTES + " bytes");
            if (b == '\n' && (matched == 1 || matched == 3)) matched++;
            else if (b == '\r' && (matched == 0 || matched == 2)) matched++;
            else if (b == '\n') throw new FramingException("a line ending in a bare LF");
            else matched = 0;
            if (matched == 4) return Optional.of(parse(bytes.toString(StandardCharsets.ISO_8859_1)));
        }
    }

    private static Head parse(String text) throws FramingException {
        String[] lines = text.substring(0, text.length() - 4).split("\r\n", -1);
        if (lines[0].isEmpty() || lines[0].indexOf(' ') < 0) throw new FramingException("no start line");
        var fields = new ArrayList<Map.Entry<String, String>>();
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            int colon = line.indexOf(':');
            if (colon <= 0) throw new FramingException("a header line without a name and colon");
            String name = line.substring(0, colon);
            if (!name.chars().allMatch(Http1::tokenChar)) throw new FramingException("an invalid header name (whitespace or obsolete folding)");
            String value = line.substring(colon + 1).strip();
            if (value.indexOf('\r') >= 0 || value.indexOf('\0') >= 0) throw new FramingException("a header value with CR or NUL");
            fields.add(Map.entry(name, value));
        }
        return new Head(lines[0], fields);
    }

    private static boolean tokenChar(int c) {
        return c > 32 && c < 127 && "()<>@,;:\\\"/[]?={}".indexOf(c) < 0;
    }

    /** The framing of a request's body. */
    static Body requestBody(Head head) throws FramingException {
        return body(head, false);
    }

    /** The framing of a response's body, given the method of its request. */
    static Body responseBody(Head head, String requestMethod) throws FramingException {
        int status = head.status();
        if (requestMethod.equals("HEAD") || status / 100 == 1 || status == 204 || status == 304) return new None();
        if (requestMethod.equals("CONNECT") && status / 100 == 2) return new UntilClose();
        return body(head, true);
    }

    private static Body body(Head head, boolean response) throws FramingException {
        var codings = head.values("Transfer-Encoding");
        var lengths = head.values("Content-Length");
        if (!codings.isEmpty()) {
            if (!lengths.isEmpty()) throw new FramingException("both Transfer-Encoding and Content-Length");
            String all = String.join(",", codings).toLowerCase(Locale.ROOT).replace(" ", "");
            // chunked must come last (RFC 9112 6.3); the codings before it travel inside the chunks untouched
            if (all.equals("chunked") || all.endsWith(",chunked")) return new Chunked();
            if (response) return new UntilClose();
            throw new FramingException("a request whose transfer coding does not end with chunked: " + all);
        }
        if (lengths.isEmpty()) return response ? new UntilClose() : new None();
        long length = -1;
        for (String v : lengths) {
            for (String part : v.split(",")) {
                String p = part.strip();
                if (!p.matches("[0-9]{1,18}")) throw new FramingException("an invalid Content-Length");
                long l = Long.parseLong(p);
                if (length >= 0 && l != length) throw new FramingException("differing Content-Length values");
                length = l;
            }
        }
        return length == 0 ? new None() : new Fixed(length);
    }

    /** Copies one body from {@code in} to {@code out} as framed, flushing as it goes. */
    static void copyBody(Body body, InputStream in, OutputStream out) throws IOException {
        switch (body) {
            case None n -> {
            }
            case Fixed f -> copyExactly(in, out, f.length());
            case Chunked c -> copyChunked(in, out);
            case UntilClose u -> in.transferTo(out);
        }
        out.flush();
    }

    private static void copyExactly(InputStream in, OutputStream out, long length) throws IOException {
        byte[] buffer = new byte[COPY_BUFFER];
        long left = length;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) throw new EOFException("the stream ended " + left + " bytes before the end of a body");
            out.write(buffer, 0, n);
            out.flush();
            left -= n;
        }
    }

    private static void copyChunked(InputStream in, OutputStream out) throws IOException {
        while (true) {
            String sizeLine = line(in);
            out.write((sizeLine + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            int semicolon = sizeLine.indexOf(';');
            String hex = (semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).strip();
            if (!hex.matches("[0-9A-Fa-f]{1,15}")) throw new FramingException("an invalid chunk size");
            long size = Long.parseLong(hex, 16);
            if (size == 0) break;
            copyExactly(in, out, size);
            if (!line(in).isEmpty()) throw new FramingException("a chunk not followed by CRLF");
            out.write('\r');
            out.write('\n');
        }
        while (true) { // trailer fields, then the empty line
            String trailer = line(in);
            out.write((trailer + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            if (trailer.isEmpty()) return;
        }
    }

    /** A CRLF-terminated line without its CRLF. */
    private static String line(InputStream in) throws IOException {
        var sb = new StringBuilder();
        while (true) {
            int b = in.read();
            if (b < 0) throw new EOFException("the stream ended inside a chunked body");
            if (b == '\r') {
                if (in.read() != '\n') throw new FramingException("a bare CR in a chunked body");
                return sb.toString();
            }
            if (b == '\n') throw new FramingException("a bare LF in a chunked body");
            if (sb.length() >= MAX_CHUNK_LINE) throw new FramingException("a chunk line longer than " + MAX_CHUNK_LINE + " bytes");
            sb.append((char) b);
        }
    }
}
