package io.stasis.sdk;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

/**
 * Reads the {@code text/event-stream} answer of a streaming exec: {@code stdout}/{@code stderr}
 * events go to the listener as they arrive and are kept (up to a limit, like the server's
 * non-streaming exec) for the final {@link ExecResult}; the {@code exit} event ends it.
 */
final class ExecEventStream {
    /** Output kept per stream for the result; the same default as the server's non-streaming exec. */
    static final int KEPT_OUTPUT_BYTES = 16 << 20;

    private final ExecOutputListener listener;
    private final String requestId;
    private final Kept stdout = new Kept();
    private final Kept stderr = new Kept();
    private ExecWire.Exit exit;

    ExecEventStream(ExecOutputListener listener, String requestId) {
        this.listener = listener;
        this.requestId = requestId;
    }

    /**
     * Reads events until {@code exit} (then stops reading) or the end of the stream.
     *
     * @return the result, or null when the stream ended without an exit event
     */
    ExecResult read(InputStream in) throws IOException {
        var parser = new SseParser(this::onEvent);
        byte[] buffer = new byte[8192];
        int n;
        while (exit == null && (n = in.read(buffer)) >= 0) {
            parser.feed(buffer, 0, n);
        }
        parser.finish();
        if (exit == null) return null;
        return new ExecResult(exit.exitCode(), exit.signal(), stdout.bytes(), stderr.bytes(), stdout.truncated,
                stderr.truncated, exit.timedOut(), Duration.ofMillis(exit.durationMs()));
    }

    private void onEvent(SseEvent event) {
        if (exit != null) return; // nothing after exit counts
        switch (event.event()) {
            case "stdout" -> {
                byte[] chunk = chunk(event);
                stdout.add(chunk);
                listener.onStdout(chunk);
            }
            case "stderr" -> {
                byte[] chunk = chunk(event);
                stderr.add(chunk);
                listener.onStderr(chunk);
            }
            case "exit" -> exit = parse(event, ExecWire.Exit.class);
            case "error" -> throw ApiErrors.fromStreamEvent(event, requestId);
            default -> {
                // Unknown events (keep-alives, later additions) are ignored.
            }
        }
    }

    private byte[] chunk(SseEvent event) {
        ExecWire.Chunk chunk = parse(event, ExecWire.Chunk.class);
        return Utf8.decode(chunk.data(), chunk.encoding());
    }

    private static <T> T parse(SseEvent event, Class<T> type) {
        try {
            return Wire.MAPPER.readValue(event.data(), type);
        } catch (IOException e) {
            throw new StasisClientException("cannot read exec event '" + event.event() + "': " + e.getMessage(), e);
        }
    }

    /** The first {@link #KEPT_OUTPUT_BYTES} of one output stream. */
    private static final class Kept {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private boolean truncated;

        void add(byte[] chunk) {
            int room = KEPT_OUTPUT_BYTES - bytes.size();
            if (chunk.length > room) truncated = true;
            bytes.write(chunk, 0, Math.min(room, chunk.length));
        }

        byte[] bytes() {
            return bytes.toByteArray();
        }
    }
}
