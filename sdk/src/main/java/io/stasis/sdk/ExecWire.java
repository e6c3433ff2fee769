package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/** The JSON shapes of {@code POST /v1/sandboxes/{id}/exec}. */
final class ExecWire {
    private ExecWire() {
    }

    /** The request body; null fields are left out. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Body(List<String> cmd, String cwd, Map<String, String> env, String stdin, String stdinEncoding,
                String encoding, Long timeoutMs, String user) {
    }

    /** The non-streaming result. */
    record Response(int exitCode, String signal, String stdout, String stderr, String encoding,
                    boolean stdoutTruncated, boolean stderrTruncated, boolean timedOut, long durationMs) {
    }

    /** The data of an SSE {@code stdout} / {@code stderr} event. */
    record Chunk(String data, long offset, String encoding) {
    }

    /** The data of the SSE {@code exit} event. */
    record Exit(int exitCode, String signal, boolean timedOut, long durationMs) {
    }
}
