package io.stasis.sdk;

import java.util.Map;

/** HTTP 5xx: {@code runtime_failed}, {@code internal}, or any other server failure. The server logs it under {@link #requestId()}. */
public class ServerErrorException extends StasisApiException {
    public ServerErrorException(int status, String code, String errorMessage, Map<String, Object> details, String requestId) {
        super(status, code, errorMessage, details, requestId);
    }
}
