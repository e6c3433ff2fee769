package io.stasis.network.linux.proxy;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds the host an HTTP/1.x request names: the authority of an absolute-form target, else the
 * {@code Host} header, without its port. Strict where servers disagree (RFC 9112): bare CR or LF,
 * obs-fold, whitespace before a colon, two Host headers, or a Host that differs from the target's
 * authority are refused. HTTP/2 prior knowledge ({@code PRI *}) and {@code CONNECT} are refused too:
 * their host is not in a header this parser reads.
 */
final class HttpHeadParser implements HeadParser {
    private static final String TOKEN_SPECIALS = "!#$%&'*+-.^_`|~";

    @Override
    public Head parse(byte[] buffer, int length) throws MalformedHeadException {
        int end = headEnd(buffer, length);
        if (end < 0) {
            checkMethodPrefix(buffer, length); // refuse non-HTTP early instead of after 64 KiB or the timeout
            return Head.PARTIAL;
        }
        // ISO-8859-1 maps each byte to one char, so obs-text in values survives and offsets stay bytes.
        String head = new String(buffer, 0, end, StandardCharsets.ISO_8859_1);
        String[] lines = head.split("\r\n", -1);
        for (String line : lines)
            if (line.indexOf('\r') >= 0 || line.indexOf('\n') >= 0) throw MalformedHeadException.http("bare CR or LF");
        Optional<String> authority = requestTarget(lines[0]);
        String host = null;
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            if (line.isEmpty()) throw MalformedHeadException.http("empty line inside the head");
            if (line.charAt(0) == ' ' || line.charAt(0) == '\t') throw MalformedHeadException.http("obs-fold");
            int colon = line.indexOf(':');
            if (colon <= 0 || !isToken(line.substring(0, colon))) throw MalformedHeadException.http("bad header line: " + HostNames.printable(line));
            if (!line.substring(0, colon).toLowerCase(Locale.ROOT).equals("host")) continue;
            if (host != null) throw MalformedHeadException.http("two Host headers");
            host = line.substring(colon + 1).strip();
        }
        if (authority.isPresent() && host != null && !authority.get().equalsIgnoreCase(host))
            throw MalformedHeadException.http("Host " + HostNames.printable(host) + " differs from the target's " + HostNames.printable(authority.get()));
        String named = authority.orElse(host);
        return new Head.Complete(named == null ? Optional.empty() : hostOf(named));
    }

    /** The offset just past the first CRLF CRLF, or -1. */
    private static int headEnd(byte[] b, int length) {
        for (int i = 3; i < length; i++)
            if (b[i] == '\n' && b[i - 1] == '\r' && b[i - 2] == '\n' && b[i - 3] == '\r') return i - 3;
        return -1;
    }

    private static void checkMethodPrefix(byte[] b, int length) throws MalformedHeadException {
        for (int i = 0; i < length; i++) {
            char c = (char) (b[i] & 0xff);
            if (c == ' ' && i > 0) return;
            if (!isTokenChar(c)) throw MalformedHeadException.http("not an HTTP request");
        }
    }

    /** The authority of an absolute-form target; empty for origin-form and {@code *}. */
    private static Optional<String> requestTarget(String requestLine) throws MalformedHeadException {
        String[] parts = requestLine.split(" ", -1);
        if (parts.length != 3) throw MalformedHeadException.http("request line: " + HostNames.printable(requestLine));
        String method = parts[0], target = parts[1], version = parts[2];
        if (!isToken(method)) throw MalformedHeadException.http("method " + HostNames.printable(method));
        if (!version.equals("HTTP/1.1") && !version.equals("HTTP/1.0")) throw MalformedHeadException.http("version " + HostNames.printable(version));
        if (method.equals("CONNECT")) throw MalformedHeadException.http("CONNECT");
        if (target.startsWith("/") || target.equals("*")) return Optional.empty();
        String lower = target.toLowerCase(Locale.ROOT);
        int schemeEnd = lower.startsWith("http://") ? 7 : lower.startsWith("https://") ? 8 : -1;
        if (schemeEnd < 0) throw MalformedHeadException.http("request target " + HostNames.printable(target));
        int authorityEnd = schemeEnd;
        while (authorityEnd < target.length() && "/?#".indexOf(target.charAt(authorityEnd)) < 0) authorityEnd++;
        String authority = target.substring(schemeEnd, authorityEnd);
        if (authority.indexOf('@') >= 0) throw MalformedHeadException.http("user info in the request target");
        return Optional.of(authority);
    }

    /** The host of {@code host [":" port]} as a name; empty for an IP literal. */
    private static Optional<String> hostOf(String authority) throws MalformedHeadException {
        String host;
        String port;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0 || !HostNames.isIpv6Literal(authority.substring(1, close))) throw MalformedHeadException.http("bad IPv6 literal");
            host = null;
            port = authority.substring(close + 1);
        } else {
            int colon = authority.indexOf(':');
            host = colon < 0 ? authority : authority.substring(0, colon);
            port = colon < 0 ? "" : authority.substring(colon);
        }
        if (!port.isEmpty() && !port.matches(":[0-9]{0,5}")) throw MalformedHeadException.http("bad port in " + HostNames.printable(authority));
        return host == null ? Optional.empty() : HostNames.normalize(host, MalformedHeadException::http);
    }

    private static boolean isToken(String s) {
        if (s.isEmpty()) return false;
        for (int i = 0; i < s.length(); i++) if (!isTokenChar(s.charAt(i))) return false;
        return true;
    }

    private static boolean isTokenChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || TOKEN_SPECIALS.indexOf(c) >= 0;
    }
}
