package io.stasis.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Turns an error response into the matching {@link StasisApiException} subclass: by error code
 * first (codes are stable), by HTTP status when the code is unknown to this SDK version.
 */
final class ApiErrors {
    private static final int MAX_TEXT_IN_MESSAGE = 300;

    private ApiErrors() {
    }

    static StasisApiException fromResponse(int status, byte[] body, String requestId) {
        JsonNode error = parseError(body);
        if (error == null) {
            String text = new String(body, StandardCharsets.UTF_8).strip();
            if (text.length() > MAX_TEXT_IN_MESSAGE) text = text.substring(0, MAX_TEXT_IN_MESSAGE) + "...";
            String message = text.isEmpty() ? "HTTP " + status + " without an error body" : text;
            return create(status, "http_" + status, message, Map.of(), requestId);
        }
        String code = error.path("code").asText("http_" + status);
        String message = error.path("message").asText("");
        Map<String, Object> details = new LinkedHashMap<>();
        JsonNode detailsNode = error.path("details");
        if (detailsNode.isObject()) {
            details = Wire.MAPPER.convertValue(detailsNode, Wire.MAPPER.getTypeFactory()
                    .constructMapType(LinkedHashMap.class, String.class, Object.class));
        }
        return create(status, code, message, details, requestId);
    }

    /** The {@code error} object of {@code {"error": {...}}}, or null when the body is not one. */
    static JsonNode parseError(byte[] body) {
        if (body == null || body.length == 0) return null;
        try {
            JsonNode root = Wire.MAPPER.readTree(body);
            JsonNode error = root == null ? null : root.get("error");
            return error != null && error.isObject() && error.has("code") ? error : null;
        } catch (java.io.IOException e) {
            return null;
        }
    }

    static StasisApiException create(int status, String code, String message, Map<String, Object> details,
                                     String requestId) {
        return switch (code) {
            case "unauthenticated" -> new UnauthenticatedException(status, code, message, details, requestId);
            case "forbidden" -> new ForbiddenException(status, code, message, details, requestId);
            case "not_found", "sandbox_not_found", "file_not_found", "checkpoint_not_found" ->
                    new NotFoundException(status, code, message, details, requestId);
            case "invalid_state", "name_taken", "file_exists", "directory_not_empty" ->
                    new ConflictException(status, code, message, details, requestId);
            case "malformed_request", "invalid_request", "template_not_found", "not_a_directory", "is_a_directory" ->
                    new InvalidRequestException(status, code, message, details, requestId);
            case "payload_too_large" -> new PayloadTooLargeException(status, code, message, details, requestId);
            case "quota_exceeded" -> new QuotaExceededException(status, code, message, details, requestId);
            case "host_busy", "template_unavailable" ->
                    new ServiceUnavailableException(status, code, message, details, requestId);
            case "runtime_failed", "internal" -> new ServerErrorException(status, code, message, details, requestId);
            default -> byStatus(status, code, message, details, requestId);
        };
    }

    private static StasisApiException byStatus(int status, String code, String message, Map<String, Object> details,
                                               String requestId) {
        return switch (status) {
            case 401 -> new UnauthenticatedException(status, code, message, details, requestId);
            case 403 -> new ForbiddenException(status, code, message, details, requestId);
            case 404, 410 -> new NotFoundException(status, code, message, details, requestId);
            case 409 -> new ConflictException(status, code, message, details, requestId);
            case 400, 422 -> new InvalidRequestException(status, code, message, details, requestId);
            case 413 -> new PayloadTooLargeException(status, code, message, details, requestId);
            case 429 -> new QuotaExceededException(status, code, message, details, requestId);
            case 503 -> new ServiceUnavailableException(status, code, message, details, requestId);
            default -> status >= 500
                    ? new ServerErrorException(status, code, message, details, requestId)
                    : new StasisApiException(status, code, message, details, requestId);
        };
    }
}
