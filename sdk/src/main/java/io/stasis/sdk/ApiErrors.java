package io.stasis.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
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

    /**
     * An {@code error} event inside a stream: the server can report a failure only that way once
     * the stream has begun. Its data is the usual error body, or text when it is not.
     */
    static StasisApiException fromStreamEvent(SseEvent event, String requestId) {
        byte[] body = event.data().getBytes(StandardCharsets.UTF_8);
        JsonNode error = parseError(body);
        if (error == null) {
            return create(500, "internal", event.event() + " event in the stream: " + event.data(), Map.of(), requestId);
        }
        int status = documentedStatus(error.path("code").asText(null));
        return fromResponse(status == 0 ? 500 : status, body, requestId);
    }

    /** The {@code error} object of {@code {"error": {...}}}, or null when the body is not one. */
    static JsonNode parseError(byte[] body) {
        if (body == null || body.length == 0) return null;
        try {
            JsonNode root = Wire.MAPPER.readTree(body);
            JsonNode error = root == null ? null : root.get("error");
            return error != null && error.isObject() && error.has("code") ? error : null;
        } catch (IOException e) {
            return null;
        }
    }

    static StasisApiException create(int status, String code, String message, Map<String, Object> details,
                                     String requestId) {
        int documented = documentedStatus(code);
        return byStatus(documented == 0 ? status : documented, status, code, message, details, requestId);
    }

    /**
     * The HTTP status docs/API.md gives a code, or 0 for a code this SDK does not know. Also
     * the status of errors that arrive without one (inside a stream or a WebSocket).
     */
    static int documentedStatus(String code) {
        if (code == null) return 0;
        return switch (code) {
            case "malformed_request" -> 400;
            case "unauthenticated" -> 401;
            case "forbidden" -> 403;
            case "not_found", "sandbox_not_found", "file_not_found", "checkpoint_not_found", "process_not_found",
                 "preview_not_found" -> 404;
            case "invalid_state", "checkpoint_unsupported", "generation_mismatch", "name_taken", "template_in_use", "file_exists",
                 "directory_not_empty", "store_busy" -> 409;
            case "payload_too_large" -> 413;
            case "invalid_request", "template_not_found", "not_a_directory", "is_a_directory" -> 422;
            case "quota_exceeded", "rate_limited" -> 429;
            case "host_busy", "template_unavailable" -> 503;
            case "runtime_failed", "internal" -> 500;
            default -> 0;
        };
    }

    /** The exception class for {@code kind} (a status), carrying the status the server actually sent. */
    private static StasisApiException byStatus(int kind, int status, String code, String message,
                                               Map<String, Object> details, String requestId) {
        return switch (kind) {
            case 401 -> new UnauthenticatedException(status, code, message, details, requestId);
            case 403 -> new ForbiddenException(status, code, message, details, requestId);
            case 404, 410 -> new NotFoundException(status, code, message, details, requestId);
            case 409 -> new ConflictException(status, code, message, details, requestId);
            case 400, 422 -> new InvalidRequestException(status, code, message, details, requestId);
            case 413 -> new PayloadTooLargeException(status, code, message, details, requestId);
            case 429 -> "rate_limited".equals(code) ? new RateLimitedException(status, code, message, details, requestId)
                    : new QuotaExceededException(status, code, message, details, requestId);
            case 503 -> new ServiceUnavailableException(status, code, message, details, requestId);
            default -> kind >= 500
                    ? new ServerErrorException(status, code, message, details, requestId)
                    : new StasisApiException(status, code, message, details, requestId);
        };
    }
}
