package io.stasis.sdk;

import java.util.Map;

/** HTTP 413 {@code payload_too_large}: an upload went past the server's size limit. */
public class PayloadTooLargeException extends StasisApiException {
    public PayloadTooLargeException(int status, String code, String errorMessage, Map<String, Object> details, String requestId) {
        super(status, code, errorMessage, details, requestId);
    }
}
