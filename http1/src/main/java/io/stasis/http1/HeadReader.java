package io.stasis.http1;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads HTTP/1.x heads (RFC 9112 sections 2 to 5). Strict where laxness lets a proxy and the server
 * behind it disagree on where a message ends: lines end in CRLF only, no folded lines, no space
 * before a colon, no control characters, bounded line length, field count and size. Every fault
 * is an {@link HttpFramingException}: 400 or 431 (too large) for a request, 502 for a response.
 */
public final class HeadReader {
    /** The largest head accepted, start line and fields with their line ends. */
    public static final int MAX_HEAD_BYTES = 64 * 1024;
    /** The longest line of a head, without its CRLF: twice what common servers accept (8 KiB). */
    public static final int MAX_LINE_BYTES = 16 * 1024;
    /** The most header fields in one head (or trailer fields after a chunked body). */
    public static final int MAX_FIELDS = 256;

    private HeadReader() {
    }

    /**
     * The next request's head, or null when the client closed the connection before sending a
     * byte of one. Empty lines before the request line are skipped, as RFC 9112 section 2.2 asks.
     */
    public static RequestHead readRequest(HttpInput in) throws IOException {
        var lines = readLines(in, 431, 400, true);
        if (lines == null) return null;
        String line = lines.getFirst();
        int first = line.indexOf(' ');
        int second = first < 0 ? -1 : line.indexOf(' ', first + 1);
        if (second < 0 || line.indexOf(' ', second + 1) >= 0) throw new HttpFramingException(400, "not an HTTP/1.x request line");
        String method = line.substring(0, first), target = line.substring(first + 1, second), version = line.substring(second + 1);
        if (!isToken(method) || target.isEmpty() || !isVersion(version)) throw new HttpFramingException(400, "not an HTTP/1.x request line");
        return new RequestHead(method, target, version, fields(lines, 1, 400));
    }

    /**
     * The server's next response head, or null when it closed the connection before a byte of
     * one (a kept-alive connection it had closed meanwhile).
     */
    public static ResponseHead readResponse(HttpInput in) throws IOException {
        var lines = readLines(in, 502, 502, false);
        if (lines == null) return null;
        String line = lines.getFirst();
        int space = line.indexOf(' ');
        if (space < 0 || !isVersion(line.substring(0, space))) throw new HttpFramingException(502, "the answer is not HTTP/1.x");
        String rest = line.substring(space + 1);
        if (rest.length() < 3 || !isStatus(rest) || (rest.length() > 3 && rest.charAt(3) != ' '))
            throw new HttpFramingException(502, "a status line without a valid status code");
        String reason = rest.length() > 4 ? rest.substring(4) : "";
        return new ResponseHead(line.substring(0, space), Integer.parseInt(rest.substring(0, 3)), reason, fields(lines, 1, 502));
    }

    /**
     * The field of one header (or trailer) line: a token, a colon right after it, the value
     * without the whitespace around it.
     */
    static void addField(HttpHeaders headers, String line, int status) throws HttpFramingException {
        int colon = line.indexOf(':');
        if (colon <= 0 || !isToken(line.substring(0, colon)))
            throw new HttpFramingException(status, "malformed header field (no name, a folded line or a space before the colon)");
        headers.add(line.substring(0, colon), line.substring(colon + 1).strip());
    }

    private static HttpHeaders fields(List<String> lines, int from, int status) throws HttpFramingException {
        var headers = new HttpHeaders();
        for (String line : lines.subList(from, lines.size())) addField(headers, line, status);
        return headers;
    }

    /** The head's lines up to the empty line, which is left out; null at the end of the stream before any byte. */
    private static List<String> readLines(HttpInput in, int tooLarge, int malformed, boolean skipLeadingEmpty) throws IOException {
        var lines = new ArrayList<String>();
        int total = 0;
        while (true) {
            int budget = Math.min(MAX_LINE_BYTES, MAX_HEAD_BYTES - total - 2);
            if (budget < 0) throw new HttpFramingException(tooLarge, "a head larger than " + MAX_HEAD_BYTES + " bytes");
            String line = in.readLine(budget, tooLarge, malformed);
            if (line == null) {
                if (total == 0) return null;
                throw new HttpFramingException(malformed, "the connection closed in the middle of a head");
            }
            total += line.length() + 2;
            if (line.isEmpty()) {
                if (!lines.isEmpty()) return lines;
                if (skipLeadingEmpty) continue;
                throw new HttpFramingException(malformed, "a head that starts with an empty line");
            }
            checkCharacters(line, malformed);
            if (lines.size() > MAX_FIELDS) throw new HttpFramingException(tooLarge, "more than " + MAX_FIELDS + " header fields");
            lines.add(line);
        }
    }

    /** Control characters but HTAB are refused anywhere in a head (RFC 9110 section 5.5); obs-text passes. */
    static void checkCharacters(String line, int status) throws HttpFramingException {
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if ((c < 0x20 && c != '\t') || c == 0x7f) throw new HttpFramingException(status, "a control character in the head");
        }
    }

    private static boolean isVersion(String version) {
        return version.equals("HTTP/1.1") || version.equals("HTTP/1.0");
    }

    private static boolean isStatus(String rest) {
        return rest.charAt(0) >= '1' && rest.charAt(0) <= '9' && isDigit(rest.charAt(1)) && isDigit(rest.charAt(2));
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /** An RFC 9110 token: one or more tchar. */
    static boolean isToken(String s) {
        if (s.isEmpty()) return false;
        for (int i = 0; i < s.length(); i++) if (!isTokenChar(s.charAt(i))) return false;
        return true;
    }

    private static boolean isTokenChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || isDigit(c) || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
    }
}
