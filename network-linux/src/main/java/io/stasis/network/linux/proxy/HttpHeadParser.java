package io.stasis.network.linux.proxy;

import io.stasis.http1.HeadReader;
import io.stasis.http1.HttpInput;
import io.stasis.http1.RequestHead;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds the host an HTTP/1.x request names: the authority of an absolute-form target, else the
 * {@code Host} header, without its port. The head is read by {@link HeadReader}, the same strict
 * reading as the proxies' (bare CR or LF, obs-fold, whitespace before a colon refused); on top of
 * it, where servers disagree on the host: two Host headers, or a Host that differs from the
 * target's authority, are refused. HTTP/2 prior knowledge ({@code PRI *}) and {@code CONNECT} are
 * refused too: their host is not in a header this parser reads.
 */
final class HttpHeadParser implements HeadParser {
    private static final String TOKEN_SPECIALS = "!#$%&'*+-.^_`|~";

    @Override
    public Head parse(byte[] buffer, int length) throws MalformedHeadException {
        checkMethodPrefix(buffer, length); // refuse non-HTTP early instead of after 64 KiB or the timeout
        int end = headEnd(buffer, length);
        if (end < 0) return Head.PARTIAL;
        RequestHead head;
        try {
            head = HeadReader.readRequest(new HttpInput(new ByteArrayInputStream(buffer, 0, end + 4)));
        } catch (IOException e) { // a framing fault: the bytes are in memory
            throw MalformedHeadException.http(e.getMessage());
        }
        Optional<String> authority = requestTarget(head);
        List<String> hosts = head.headers().all("Host");
        if (hosts.size() > 1) throw MalformedHeadException.http("two Host headers");
        String host = hosts.isEmpty() ? null : hosts.getFirst();
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
    private static Optional<String> requestTarget(RequestHead head) throws MalformedHeadException {
        String target = head.target();
        if (head.method().equals("CONNECT")) throw MalformedHeadException.http("CONNECT");
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

    private static boolean isTokenChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || TOKEN_SPECIALS.indexOf(c) >= 0;
    }
}
