package io.stasis.server.http;

import io.javalin.http.Context;
import io.stasis.core.error.StasisException;
import java.util.Optional;
import java.util.OptionalInt;

/** Typed query parameters; a value of the wrong shape is 400 naming the parameter. */
final class Query {
    private Query() {
    }

    static Optional<String> string(Context ctx, String name) {
        return Optional.ofNullable(ctx.queryParam(name));
    }

    static String required(Context ctx, String name) {
        String value = ctx.queryParam(name);
        if (value == null || value.isEmpty()) throw StasisException.invalid(name, "the query parameter '" + name + "' is required");
        return value;
    }

    static boolean bool(Context ctx, String name, boolean fallback) {
        String value = ctx.queryParam(name);
        if (value == null || value.isEmpty()) return fallback;
        return switch (value) {
            case "true", "1" -> true;
            case "false", "0" -> false;
            default -> throw StasisException.malformed("query parameter '" + name + "' must be true or false, was '" + value + "'");
        };
    }

    static int integer(Context ctx, String name, int fallback) {
        String value = ctx.queryParam(name);
        if (value == null || value.isEmpty()) return fallback;
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw StasisException.malformed("query parameter '" + name + "' must be an integer, was '" + value + "'");
        }
    }

    /** File permission bits written in octal, e.g. {@code 0644} or {@code 755}. */
    static OptionalInt mode(Context ctx) {
        String value = ctx.queryParam("mode");
        if (value == null || value.isEmpty()) return OptionalInt.empty();
        try {
            int mode = Integer.parseInt(value, 8);
            if (mode < 0 || mode > 07777) throw new NumberFormatException();
            return OptionalInt.of(mode);
        } catch (NumberFormatException e) {
            throw StasisException.invalid("mode", "must be octal permission bits such as 0644, was '" + value + "'");
        }
    }
}
