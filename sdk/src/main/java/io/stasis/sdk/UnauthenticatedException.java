package io.stasis.sdk;

import java.util.Map;

/** HTTP 401 {@code unauthenticated}: the API key is missing, malformed or unknown. */
public class UnauthenticatedException extends StasisApiException {
    public UnauthenticatedException(int status, String code, String errorMessage, Map<String, Object> details, String requestId) {
        super(status, code, errorMessage, details, requestId);
    }
}
