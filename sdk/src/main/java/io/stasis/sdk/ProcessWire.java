package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** The JSON shapes of {@code /v1/sandboxes/{id}/processes} that have no public type. */
final class ProcessWire {
    private ProcessWire() {
    }

    /** {@code POST .../processes}; null fields are left out. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Start(List<String> cmd, String cwd, Map<String, String> env, String tag, Boolean keepAlive,
                 Duration keepAliveFor, Boolean stdin, TerminalSize pty) {
    }

    /** {@code GET .../output}: text, or base64 when {@code encoding} says so. */
    record Output(String stdout, long stdoutOffset, String stderr, long stderrOffset, String encoding,
                  ProcessInfo process) {
    }

    /** {@code POST .../signal}. */
    record Signal(String signal) {
    }
}
