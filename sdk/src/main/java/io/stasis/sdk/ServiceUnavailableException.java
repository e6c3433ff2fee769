package io.stasis.sdk;

import java.util.Map;

/** HTTP 503: {@code host_busy} or {@code template_unavailable}; worth retrying later. */
public class ServiceUnavailableException extends StasisApiException {
    public ServiceUnavailableException(int status, String code, String errorMessage, Map<String, Object> details, String requestId) {
        super(status, code, errorMessage, details, requestId);
    }
}
