package io.stasis.sdk;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The server answered a call with an error: {@code {"error": {"code", "message", "details"}}}.
 * Subclasses group the codes by what a caller usually does about them; catch this class to handle
 * them all, and switch on {@link #code()} for the exact reason.
 *
 * <pre>{@code
 * try {
 *     sandboxes.create(CreateSandboxRequest.builder().name("my-agent").build());
 * } catch (ConflictException e) {
 *     if (e.code().equals("name_taken")) { ... }
 * } catch (StasisApiException e) {
 *     System.err.println(e.code() + " (request " + e.requestId() + "): " + e.errorMessage());
 * }
 * }</pre>
 */
public class StasisApiException extends StasisClientException {
    private final int status;
    private final String code;
    private final String errorMessage;
    private final Map<String, Object> details;
    private final String requestId;

    public StasisApiException(int status, String code, String errorMessage, Map<String, Object> details,
                              String requestId) {
        super(describe(status, code, errorMessage, requestId));
        this.status = status;
        this.code = code;
        this.errorMessage = errorMessage;
        this.details = details == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(details));
        this.requestId = requestId;
    }

    /** The HTTP status, e.g. 404. */
    public int status() {
        return status;
    }

    /** The stable snake_case error code, e.g. {@code sandbox_not_found}. */
    public String code() {
        return code;
    }

    /** The server's human-readable message, without status or code. */
    public String errorMessage() {
        return errorMessage;
    }

    /** Structured details (e.g. {@code {"sandbox": "x"}}); empty when the server sent none. */
    public Map<String, Object> details() {
        return details;
    }

    /** The {@code X-Request-Id} of the failed call (quote it when reporting a server error), or null. */
    public String requestId() {
        return requestId;
    }

    private static String describe(int status, String code, String message, String requestId) {
        var text = new StringBuilder().append(code).append(": ").append(message).append(" (HTTP ").append(status);
        if (requestId != null) text.append(", request ").append(requestId);
        return text.append(')').toString();
    }
}
