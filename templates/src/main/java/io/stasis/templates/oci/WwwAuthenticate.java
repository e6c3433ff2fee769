package io.stasis.templates.oci;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A registry's {@code WWW-Authenticate} challenge (RFC 7235): the scheme ({@code Bearer} or
 * {@code Basic}) and its parameters, e.g. {@code Bearer realm="https://auth.example/token",
 * service="registry.example",scope="repository:team/app:pull"}. Quoted values may hold commas and
 * escaped quotes.
 */
record WwwAuthenticate(String scheme, Map<String, String> params) {
    WwwAuthenticate {
        params = Map.copyOf(params);
    }

    /** The first challenge of the header; empty when there is none or it cannot be read. */
    static Optional<WwwAuthenticate> parse(String header) {
        if (header == null) return Optional.empty();
        String h = header.strip();
        int space = h.indexOf(' ');
        String scheme = (space < 0 ? h : h.substring(0, space)).toLowerCase(Locale.ROOT);
        if (scheme.isEmpty()) return Optional.empty();
        var params = new LinkedHashMap<String, String>();
        int i = space < 0 ? h.length() : space + 1;
        while (i < h.length()) {
            while (i < h.length() && (h.charAt(i) == ' ' || h.charAt(i) == ',')) i++;
            int eq = h.indexOf('=', i);
            if (eq < 0) break;
            String key = h.substring(i, eq).strip().toLowerCase(Locale.ROOT);
            i = eq + 1;
            var value = new StringBuilder();
            if (i < h.length() && h.charAt(i) == '"') {
                i++;
                while (i < h.length() && h.charAt(i) != '"') {
                    if (h.charAt(i) == '\\' && i + 1 < h.length()) i++;
                    value.append(h.charAt(i++));
                }
                i++; // the closing quote
            } else {
                while (i < h.length() && h.charAt(i) != ',') value.append(h.charAt(i++));
            }
            params.putIfAbsent(key, value.toString().strip());
        }
        return Optional.of(new WwwAuthenticate(scheme, params));
    }

    Optional<String> param(String name) {
        return Optional.ofNullable(params.get(name));
    }
}
