package io.stasis.core.network;

import io.stasis.core.error.StasisException;
import io.stasis.core.secret.SecretTemplate;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Headers the egress proxy sets on every HTTPS request of a sandbox to {@code domain} (exact or
 * {@code *.}), replacing any header of the same name the sandbox sent. Values may name secrets
 * ({@link SecretTemplate}); the proxy fills them in, so the sandbox never holds them. Rules apply
 * to TLS connections on port 443 only: plain HTTP is never given secrets.
 */
public record HeaderRule(DomainPattern domain, Map<String, SecretTemplate> headers) {
    public static final int MAX_HEADERS = 32;
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}");
    /** Headers that frame the message or route it: the proxy owns them. */
    private static final Set<String> RESERVED = Set.of("host", "content-length", "transfer-encoding", "connection", "upgrade",
            "te", "trailer", "keep-alive", "proxy-connection", "expect");

    public HeaderRule {
        Objects.requireNonNull(domain);
        headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    }

    /**
     * Checks names and values and builds the rule.
     *
     * @throws StasisException {@code invalid_request} naming the field ({@code field.headers.NAME})
     */
    public static HeaderRule of(String domain, Map<String, String> headers, String field) {
        var pattern = DomainPattern.parse(domain, field + ".domain");
        if (headers.isEmpty()) throw StasisException.invalid(field + ".headers", "must name at least one header");
        if (headers.size() > MAX_HEADERS) throw StasisException.invalid(field + ".headers", "holds more than " + MAX_HEADERS + " headers");
        var out = new LinkedHashMap<String, SecretTemplate>();
        var seen = new LinkedHashSet<String>();
        headers.forEach((name, value) -> {
            String f = field + ".headers." + name;
            if (!TOKEN.matcher(name).matches()) throw StasisException.invalid(f, "is not a valid header name");
            String lower = name.toLowerCase(Locale.ROOT);
            if (RESERVED.contains(lower)) throw StasisException.invalid(f, "is set by the proxy itself and cannot be injected");
            if (!seen.add(lower)) throw StasisException.invalid(f, "is given twice (header names are case-insensitive)");
            out.put(name, SecretTemplate.parse(value, f));
        });
        return new HeaderRule(pattern, out);
    }

    /** Every secret the rule's values name. */
    public Set<String> secretNames() {
        var out = new LinkedHashSet<String>();
        headers.values().forEach(t -> out.addAll(t.secretNames()));
        return out;
    }

    /** The header values with secrets filled in; empty if one of them is missing from {@code secrets}. */
    public Optional<Map<String, String>> expand(Map<String, String> secrets) {
        var out = new LinkedHashMap<String, String>();
        for (var e : headers.entrySet()) {
            var value = e.getValue().expand(secrets);
            if (value.isEmpty()) return Optional.empty();
            out.put(e.getKey(), value.get());
        }
        return Optional.of(out);
    }
}
