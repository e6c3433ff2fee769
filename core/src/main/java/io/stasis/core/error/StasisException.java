package io.stasis.core.error;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The one exception type that crosses the API boundary: a stable {@link ErrorCode}, a message for
 * people, and details for programs (which sandbox, which step, a tool's stderr tail).
 * Build it with the named factories so messages stay consistent.
 */
public final class StasisException extends RuntimeException {
    private final ErrorCode code;
    private final Map<String, Object> details;

    public StasisException(ErrorCode code, String message, Map<String, ?> details, Throwable cause) {
        super(message, cause);
        this.code = Objects.requireNonNull(code);
        this.details = Map.copyOf(details);
    }

    public StasisException(ErrorCode code, String message, Map<String, ?> details) {
        this(code, message, details, null);
    }

    public StasisException(ErrorCode code, String message) {
        this(code, message, Map.of(), null);
    }

    public ErrorCode code() {
        return code;
    }

    public Map<String, Object> details() {
        return details;
    }

    public static StasisException sandboxNotFound(String idOrName) {
        return new StasisException(ErrorCode.SANDBOX_NOT_FOUND,
                "no sandbox with id or name '" + idOrName + "'", Map.of("sandbox", idOrName));
    }

    public static StasisException templateNotFound(String name) {
        return new StasisException(ErrorCode.TEMPLATE_NOT_FOUND,
                "no template named '" + name + "' (GET /v1/templates lists them)", Map.of("template", name));
    }

    public static StasisException invalidState(String sandbox, String state, String action) {
        return new StasisException(ErrorCode.INVALID_STATE,
                "sandbox " + sandbox + " is " + state + ": cannot " + action,
                Map.of("sandbox", sandbox, "state", state, "action", action));
    }

    public static StasisException generationMismatch(String sandbox, long expected, long actual) {
        return new StasisException(ErrorCode.GENERATION_MISMATCH, "sandbox " + sandbox + " is at generation " + actual
                + ", older than the " + expected + " expected: its live state went back to an earlier one",
                Map.of("sandbox", sandbox, "expected", expected, "actual", actual));
    }

    public static StasisException nameTaken(String name) {
        return new StasisException(ErrorCode.NAME_TAKEN,
                "a sandbox named '" + name + "' already exists", Map.of("name", name));
    }

    public static StasisException invalid(String field, String problem) {
        return new StasisException(ErrorCode.INVALID_REQUEST, field + ": " + problem, Map.of("field", field));
    }

    public static StasisException malformed(String problem) {
        return new StasisException(ErrorCode.MALFORMED_REQUEST, problem);
    }

    public static StasisException fileNotFound(String path) {
        return new StasisException(ErrorCode.FILE_NOT_FOUND, "no such file or directory: " + path, Map.of("path", path));
    }

    /** A host tool or the runtime failed; the message names the step and the sandbox. */
    public static StasisException runtimeFailed(String sandbox, String step, String problem, Throwable cause) {
        var details = new LinkedHashMap<String, Object>();
        if (sandbox != null) details.put("sandbox", sandbox);
        details.put("step", step);
        return new StasisException(ErrorCode.RUNTIME_FAILED,
                step + " failed" + (sandbox == null ? "" : " for sandbox " + sandbox) + ": " + problem, details, cause);
    }
}
