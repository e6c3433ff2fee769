package io.stasis.server.preview;

import io.stasis.http1.HttpHeaders;
import io.stasis.http1.RequestHead;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Optional;

/**
 * The preview token a request carries, and the request without it. A token may come as the
 * {@code X-Stasis-Preview-Token} header (or E2B's {@code E2b-Traffic-Access-Token}), as the {@code stasis_preview_token} query parameter (the
 * link form, which the proxy exchanges for a cookie), or as the cookie of that name; the query
 * parameter wins, then the header, then the cookie. None of them ever reaches the sandbox.
 *
 * @param token     the token, if any
 * @param fromQuery whether the target held the query parameter (the answer is then a redirect)
 */
record PreviewCredentials(Optional<String> token, boolean fromQuery) {
    static final String HEADER = "X-Stasis-Preview-Token";
    /** The same, as the e2b SDKs' users send it for a sandbox without public traffic. */
    static final String E2B_HEADER = "E2b-Traffic-Access-Token";
    static final String PARAMETER = "stasis_preview_token";
    static final String COOKIE = "stasis_preview_token";

    static PreviewCredentials of(RequestHead head) {
        var query = queryToken(head.target());
        if (query.isPresent()) return new PreviewCredentials(query, true);
        var header = head.headers().first(HEADER).or(() -> head.headers().first(E2B_HEADER)).filter(t -> !t.isEmpty());
        if (header.isPresent()) return new PreviewCredentials(header, false);
        for (String field : head.headers().all("Cookie")) {
            for (String pair : field.split(";")) {
                String p = pair.strip();
                if (p.startsWith(COOKIE + "=")) return new PreviewCredentials(Optional.of(p.substring(COOKIE.length() + 1)), false);
            }
        }
        return new PreviewCredentials(Optional.empty(), false);
    }

    /** The value of the token parameter in a target's query, percent-decoded (undecodable: empty string, a wrong token). */
    private static Optional<String> queryToken(String target) {
        int q = target.indexOf('?');
        if (q < 0) return Optional.empty();
        for (String part : target.substring(q + 1).split("&")) {
            if (part.equals(PARAMETER) || part.startsWith(PARAMETER + "=")) {
                String raw = part.length() > PARAMETER.length() ? part.substring(PARAMETER.length() + 1) : "";
                try {
                    return Optional.of(URLDecoder.decode(raw, StandardCharsets.UTF_8));
                } catch (IllegalArgumentException e) {
                    return Optional.of("");
                }
            }
        }
        return Optional.empty();
    }

    /** The target without the token parameter (and without a {@code ?} left empty). */
    static String withoutToken(String target) {
        int q = target.indexOf('?');
        if (q < 0) return target;
        var kept = new ArrayList<String>();
        for (String part : target.substring(q + 1).split("&")) {
            if (!(part.equals(PARAMETER) || part.startsWith(PARAMETER + "="))) kept.add(part);
        }
        String query = String.join("&", kept.stream().filter(p -> !p.isEmpty()).toList());
        return target.substring(0, q) + (query.isEmpty() ? "" : "?" + query);
    }

    /** Removes the token header and cookie from a head that goes upstream. */
    static void strip(HttpHeaders headers) {
        headers.remove(HEADER);
        headers.remove(E2B_HEADER);
        var cookies = headers.all("Cookie");
        if (cookies.isEmpty()) return;
        var kept = new ArrayList<String>();
        for (String field : cookies) {
            for (String pair : field.split(";")) {
                String p = pair.strip();
                if (!p.isEmpty() && !p.startsWith(COOKIE + "=")) kept.add(p);
            }
        }
        headers.remove("Cookie");
        if (!kept.isEmpty()) headers.add("Cookie", String.join("; ", kept));
    }
}
