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
                 Duration keepAliveFor, Boolean stdin, TerminalSize pty, String user) {
    }

    /**
     * {@code GET .../output}: text, or base64 when {@code encoding} says so. The starts are null
     * from a server that never drops output.
     */
    record Output(String stdout, Long stdoutStart, long stdoutOffset, String stderr, Long stderrStart,
                  long stderrOffset, String encoding, ProcessInfo process) {
    }

    /** A follower's {@code dropped} event: output of {@code stream} from {@code from} to {@code to} is gone. */
    record Dropped(String stream, long from, long to) {
    }

    /** {@code POST .../signal}. */
    record Signal(String signal) {
    }
}
