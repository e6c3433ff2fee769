package io.stasis.server.preview;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Reads HTTP/1.x heads (RFC 9112) from a buffered stream, byte by byte so that not one byte of the
 * body behind the head is taken. Strict where laxness lets a proxy and its upstream disagree on
 * where a message ends (request smuggling): no folded lines, no space before a colon, no control
 * characters, a bounded size. Every fault is an {@link HttpFramingException}.
 */
final class HeadReader {
    /** The largest head accepted, request line and fields together. */
    static final int MAX_HEAD_BYTES = 64 * 1024;
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
    private static final Pattern VERSION = Pattern.compile("HTTP/1\\.[01]");
    private static final Pattern STATUS = Pattern.compile("[1-9][0-9]{2}");

    private HeadReader() {
    }

    /** The next request's head, or null when the client closed the connection before sending a byte of one. */
    static RequestHead readRequest(InputStream in) throws IOException, HttpFramingException {
        var lines = readLines(in, 431, 400, true);
        if (lines == null) return null;
        String[] parts = lines.getFirst().split(" ", -1);
        if (parts.length != 3 || !TOKEN.matcher(parts[0]).matches() || parts[1].isEmpty() || !VERSION.matcher(parts[2]).matches())
            throw new HttpFramingException(400, "not an HTTP/1.x request line");
        return new RequestHead(parts[0], parts[1], parts[2], fields(lines, 400));
    }

    /**
     * The upstream's next response head, or null when it closed the connection before a byte of
     * one (a kept-alive connection it had closed meanwhile); faults are 502 (the upstream's).
     */
    static ResponseHead readResponse(InputStream in) throws IOException, HttpFramingException {
        var lines = readLines(in, 502, 502, false);
        if (lines == null) return null;
        String line = lines.getFirst();
        int firstSpace = line.indexOf(' ');
        if (firstSpace < 0 || !VERSION.matcher(line.substring(0, firstSpace)).matches())
            throw new HttpFramingException(502, "the upstream's answer is not HTTP/1.x");
        String rest = line.substring(firstSpace + 1);
        String code = rest.length() >= 3 ? rest.substring(0, 3) : rest;
        if (!STATUS.matcher(code).matches() || (rest.length() > 3 && rest.charAt(3) != ' '))
            throw new HttpFramingException(502, "the upstream's status line has no valid status code");
        String reason = rest.length() > 4 ? rest.substring(4) : "";
        return new ResponseHead(line.substring(0, firstSpace), Integer.parseInt(code), reason, fields(lines, 502));
    }

    private static HttpHeaders fields(List<String> lines, int status) throws HttpFramingException {
        var headers = new HttpHeaders();
        for (String line : lines.subList(1, lines.size())) {
            int colon = line.indexOf(':');
            if (colon <= 0 || !TOKEN.matcher(line.substring(0, colon)).matches())
                throw new HttpFramingException(status, "malformed header field (no name, a folded line or a space before the colon)");
            headers.add(line.substring(0, colon), line.substring(colon + 1).strip());
        }
        return headers;
    }

    /**
     * The head's lines without their ends, up to the empty line; null on end of stream before any
     * byte. Leading empty lines before a request line are skipped, as RFC 9112 asks.
     */
    private static List<String> readLines(InputStream in, int tooLarge, int malformed, boolean skipLeadingEmpty)
            throws IOException, HttpFramingException {
        var lines = new ArrayList<String>();
        var line = new byte[256];
        int length = 0, total = 0;
        boolean sawByte = false, cr = false;
        while (true) {
            int b = in.read();
            if (b < 0) {
                if (!sawByte) return null;
                throw new HttpFramingException(malformed, "the connection closed in the middle of a head");
            }
            sawByte = true;
            if (++total > MAX_HEAD_BYTES)
                throw new HttpFramingException(tooLarge, "the head is larger than " + MAX_HEAD_BYTES + " bytes");
            if (b == '\n') {
                String text = new String(line, 0, length, StandardCharsets.ISO_8859_1);
                length = 0;
                cr = false;
                if (text.isEmpty()) {
                    if (lines.isEmpty()) {
                        if (skipLeadingEmpty) continue;
                        throw new HttpFramingException(malformed, "the head starts with an empty line");
                    }
                    return lines;
                }
                lines.add(text);
                continue;
            }
            if (cr) throw new HttpFramingException(malformed, "a bare CR in the head");
            if (b == '\r') {
                cr = true;
                continue;
            }
            if ((b < 0x20 && b != '\t') || b == 0x7f) throw new HttpFramingException(malformed, "a control character in the head");
            if (length == line.length) line = Arrays.copyOf(line, line.length * 2);
            line[length++] = (byte) b;
        }
    }
}
