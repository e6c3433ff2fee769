package io.stasis.sdk;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** An ordered, encoded query string; null values are left out. */
final class Query {
    private final List<String> pairs = new ArrayList<>();

    static Query of() {
        return new Query();
    }

    static Query path(String path) {
        return new Query().add("path", path);
    }

    Query add(String name, Object value) {
        if (value != null) pairs.add(encode(name) + "=" + encode(String.valueOf(value)));
        return this;
    }

    String toQueryString() {
        return pairs.isEmpty() ? "" : "?" + String.join("&", pairs);
    }

    /** Percent-encodes a query value or a path segment (a space becomes %20, '/' is encoded). */
    static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
