package io.stasis.server.http;

import io.javalin.http.Context;
import io.stasis.core.sandbox.Ids;

/** Every request gets an id, returned in {@code X-Request-Id} and written with every log line about it. */
final class RequestIds {
    static final String HEADER = "X-Request-Id";
    private static final String ATTRIBUTE = "stasis.requestId";

    private RequestIds() {
    }

    static void assign(Context ctx) {
        String id = next();
        ctx.attribute(ATTRIBUTE, id);
        ctx.header(HEADER, id);
    }

    static String next() {
        return "req_" + Ids.randomSuffix();
    }

    static String of(Context ctx) {
        String id = ctx.attribute(ATTRIBUTE);
        return id == null ? "-" : id;
    }
}
