package io.stasis.sdk;

import java.util.Map;

/** HTTP 403 {@code forbidden}: the API key may not do this. */
public class ForbiddenException extends StasisApiException {
    public ForbiddenException(int status, String code, String errorMessage, Map<String, Object> details, String requestId) {
        super(status, code, errorMessage, details, requestId);
    }
}
