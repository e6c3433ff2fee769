package io.stasis.sdk;

import java.util.Map;

/** HTTP 400/422: the request was refused as it stands: {@code malformed_request}, {@code invalid_request}, {@code template_not_found}, {@code not_a_directory}, {@code is_a_directory}. */
public class InvalidRequestException extends StasisApiException {
    public InvalidRequestException(int status, String code, String errorMessage, Map<String, Object> details, String requestId) {
        super(status, code, errorMessage, details, requestId);
    }
}
