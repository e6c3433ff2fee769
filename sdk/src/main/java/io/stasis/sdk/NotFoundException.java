package io.stasis.sdk;

import java.util.Map;

/**
 * HTTP 404: {@code sandbox_not_found}, {@code file_not_found}, {@code checkpoint_not_found} or
 * {@code not_found} (no such route). Check {@link #code()} to tell which thing is missing.
 */
public class NotFoundException extends StasisApiException {
    public NotFoundException(int status, String code, String errorMessage, Map<String, Object> details, String requestId) {
        super(status, code, errorMessage, details, requestId);
    }
}
