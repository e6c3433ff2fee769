package io.stasis.sdk;

import java.util.Map;

/** HTTP 429 {@code quota_exceeded}. */
public class QuotaExceededException extends StasisApiException {
    public QuotaExceededException(int status, String code, String errorMessage, Map<String, Object> details, String requestId) {
        super(status, code, errorMessage, details, requestId);
    }
}
