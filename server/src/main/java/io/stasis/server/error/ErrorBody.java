package io.stasis.server.error;

import io.stasis.core.error.StasisException;
import java.util.Map;

/** The error envelope every failed call returns: {@code {"error": {"code", "message", "details"}}}. */
public record ErrorBody(Detail error) {
    public record Detail(String code, String message, Map<String, Object> details) {
    }

    public static ErrorBody of(StasisException e) {
        return new ErrorBody(new Detail(e.code().wireName(), e.getMessage(), e.details()));
    }
}
