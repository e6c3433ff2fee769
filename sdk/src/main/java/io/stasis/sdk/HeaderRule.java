package io.stasis.sdk;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Headers the egress proxy sets on the sandbox's HTTPS requests to {@code domain}
 * ({@code api.example.com} or {@code *.example.com}), for example
 * {@code Authorization: Bearer {{secret:OPENAI_KEY}}}: the secret's value is filled in on the host
 * and never enters the sandbox. The domain must also be allowed by the egress policy.
 *
 * @param domain  the name the rule applies to
 * @param headers header names and values; values may hold {@code {{secret:NAME}}} placeholders
 */
public record HeaderRule(String domain, Map<String, String> headers) {
    public HeaderRule {
        Objects.requireNonNull(domain, "domain");
        headers = headers == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    }

    /** A rule setting one header. */
    public static HeaderRule of(String domain, String header, String value) {
        return new HeaderRule(domain, Map.of(header, value));
    }
}
