package io.stasis.sdk;

import java.util.Map;

/**
 * HTTP 409: {@code invalid_state}, {@code name_taken}, {@code template_in_use} (a template that
 * sandboxes still use), {@code file_exists} or {@code directory_not_empty}.
 */
public class ConflictException extends StasisApiException {
    public ConflictException(int status, String code, String errorMessage, Map<String, Object> details, String requestId) {
        super(status, code, errorMessage, details, requestId);
    }
}
