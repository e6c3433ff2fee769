package io.stasis.sdk;

import java.io.IOException;
import java.util.Arrays;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Follows a background process's output ({@code GET .../output?follow=true}) until its
 * {@code exit} event. Each chunk carries the byte offset after it; the follower keeps the offsets
 * it has delivered and, when the connection breaks, reconnects with {@code Last-Event-ID:
 * <stdout>,<stderr>}. Bytes at or before a delivered offset are skipped, so the listener gets
 * every byte exactly once however often the connection drops. Output the server itself dropped
 * (it keeps the last part of each stream) is reported to the listener as a range.
 */
final class ProcessOutputFollower {
    private final HttpTransport transport;
    private final String outputPath;
    private final ExecOutputListener listener;
    private final Reconnects reconnects;
    /** Told of each connection as it opens (a subscription closes it to stop), and asked whether to stop. */
    private final Consumer<SseConnection> reading;
    private final BooleanSupplier stopped;
    private long stdoutOffset;
    private long stderrOffset;
    private boolean resuming;

    ProcessOutputFollower(HttpTransport transport, String outputPath, ExecOutputListener listener,
                          Reconnects reconnects, long stdoutOffset, long stderrOffset) {
        this(transport, outputPath, listener, reconnects, stdoutOffset, stderrOffset, connection -> { }, () -> false);
    }

    /** As above, in the background of a subscription: {@code reading} gets each connection, {@code stopped} ends the following. */
    ProcessOutputFollower(HttpTransport transport, String outputPath, ExecOutputListener listener, Reconnects reconnects,
                          long stdoutOffset, long stderrOffset, Consumer<SseConnection> reading, BooleanSupplier stopped) {
        this.reading = reading;
        this.stopped = stopped;
        this.transport = transport;
        this.outputPath = outputPath;
        this.listener = listener;
        this.reconnects = reconnects;
        this.stdoutOffset = stdoutOffset;
        this.stderrOffset = stderrOffset;
    }

    /**
     * Delivers the output and returns at the exit event (null if stopped first).
     *
     * @throws StasisConnectionException when the connection could not be restored
     * @throws RuntimeException          what the listener threw, as it threw it
     */
    ExecWire.Exit follow() {
        try {
            while (!stopped.getAsBoolean()) {
                ExecWire.Exit exit = followOnce();
                if (exit != null) return exit;
            }
            return null;
        } catch (ConsumerFailure failure) {
            throw failure.thrown();
        }
    }

    long stdoutOffset() {
        return stdoutOffset;
    }

    long stderrOffset() {
        return stderrOffset;
    }

    /** One connection: the exit event, or null after a failure worth another attempt. */
    private ExecWire.Exit followOnce() {
        try (var stream = SseConnection.open(transport, call())) {
            reading.accept(stream);
            reconnects.connected();
            resuming = true;
            for (SseEvent event; (event = stream.next()) != null; ) {
                reconnects.progressed();
                ExecWire.Exit exit = onEvent(event, stream.requestId());
                if (exit != null) return exit;
            }
            if (stopped.getAsBoolean()) return null;
            reconnects.afterFailure(new StasisConnectionException("the output stream from " + transport.baseUrl()
                    + " (" + outputPath + ") ended before the process's exit event", null));
        } catch (StasisConnectionException e) {
            if (stopped.getAsBoolean()) return null;
            reconnects.afterFailure(e);
        }
        return null;
    }

    /**
     * No request timeout: the server sends the headers with the first event, which a quiet
     * process may not produce for hours.
     */
    private HttpTransport.Call call() {
        var query = Query.of().add("follow", true).add("offset", stdoutOffset).add("stderrOffset", stderrOffset);
        var call = HttpTransport.Call.of("GET", outputPath).query(query);
        return resuming ? call.header("Last-Event-ID", stdoutOffset + "," + stderrOffset) : call;
    }

    private ExecWire.Exit onEvent(SseEvent event, String requestId) {
        switch (event.event()) {
            case "stdout" -> deliver(event, true);
            case "stderr" -> deliver(event, false);
            case "dropped" -> skip(parse(event, ProcessWire.Dropped.class));
            case "exit" -> {
                return parse(event, ExecWire.Exit.class);
            }
            case "error" -> throw ApiErrors.fromStreamEvent(event, requestId);
            default -> {
                // Unknown events (later additions) are ignored; comments never get here.
            }
        }
        return null;
    }

    private void deliver(SseEvent event, boolean stdout) {
        ExecWire.Chunk chunk = parse(event, ExecWire.Chunk.class);
        byte[] bytes = Utf8.decode(chunk.data(), chunk.encoding());
        long delivered = stdout ? stdoutOffset : stderrOffset;
        if (chunk.offset() <= delivered) return; // sent again after a reconnect
        long start = chunk.offset() - bytes.length;
        byte[] fresh = start >= delivered ? bytes : Arrays.copyOfRange(bytes, (int) (delivered - start), bytes.length);
        if (stdout) {
            stdoutOffset = chunk.offset();
        } else {
            stderrOffset = chunk.offset();
        }
        ConsumerFailure.call(stdout ? () -> listener.onStdout(fresh) : () -> listener.onStderr(fresh));
    }

    /** Output the server no longer has: resume after it, and say so. */
    private void skip(ProcessWire.Dropped dropped) {
        boolean stdout = "stdout".equals(dropped.stream());
        if (stdout) {
            stdoutOffset = Math.max(stdoutOffset, dropped.to());
        } else {
            stderrOffset = Math.max(stderrOffset, dropped.to());
        }
        ConsumerFailure.call(() -> listener.onDropped(dropped.stream(), dropped.from(), dropped.to()));
    }

    private static <T> T parse(SseEvent event, Class<T> type) {
        try {
            return Wire.MAPPER.readValue(event.data(), type);
        } catch (IOException e) {
            throw new StasisClientException("cannot read output event '" + event.event() + "': " + e.getMessage(), e);
        }
    }
}
