package io.stasis.core.exec;

import io.stasis.core.spi.ExecHandle;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;

/**
 * Moves a process's output from its files to a listener as it comes, until the process ends or a
 * deadline passes, keeping the first bytes of each output for a result. Woken by the runtime when
 * the output changes ({@link ExecHandle#awaitOutput}), it looks anyway after 2 ms to 1 s of quiet
 * (backing off), which is when it notices a listener that left.
 */
public final class OutputPump {
    private static final int READ_CHUNK = 256 * 1024;
    private static final Duration MIN_POLL = Duration.ofMillis(2);
    private static final Duration MAX_POLL = Duration.ofSeconds(1);

    private final ExecHandle handle;
    private final ExecListener listener;
    private final OutputBuffer out;
    private final OutputBuffer err;

    /**
     * @param keepLimit    bytes of each output kept for {@link #stdout()}/{@link #stderr()}
     * @param stdoutOffset where to start reading standard output
     * @param stderrOffset where to start reading standard error
     */
    public OutputPump(ExecHandle handle, ExecListener listener, long keepLimit, long stdoutOffset, long stderrOffset) {
        this.handle = handle;
        this.listener = listener;
        this.out = new OutputBuffer(keepLimit, stdoutOffset);
        this.err = new OutputBuffer(keepLimit, stderrOffset);
    }

    /**
     * Passes output on until the process ends or {@code deadline} (a {@link System#nanoTime()} value)
     * passes. Without a listener it only waits. Returns the exit status if the process ended.
     *
     * @throws CancellationException when the listener has gone
     */
    public Optional<ExitStatus> run(long deadline) throws InterruptedException {
        boolean streaming = listener != ExecListener.NONE;
        Optional<ExitStatus> exit = Optional.empty();
        Duration poll = MIN_POLL;
        while (exit.isEmpty()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) break;
            if (streaming) {
                handle.awaitOutput(min(poll, Duration.ofNanos(left)));
                exit = handle.awaitExit(Duration.ZERO);
                if (listener.gone()) throw new CancellationException("the listener has gone");
                poll = drainAll() ? MIN_POLL : min(poll.multipliedBy(2), MAX_POLL);
            } else exit = handle.awaitExit(Duration.ofNanos(left));
        }
        return exit;
    }

    /** Passes on everything written so far; returns whether there was anything. */
    public boolean drainAll() {
        return drain(OutputKind.STDOUT, out) | drain(OutputKind.STDERR, err);
    }

    private boolean drain(OutputKind kind, OutputBuffer buffer) {
        boolean any = false;
        while (true) {
            var slice = KeptOutput.read(handle, kind, buffer.offset(), READ_CHUNK);
            if (slice.start() > buffer.offset()) {
                listener.dropped(kind, buffer.offset(), slice.start());
                buffer.skipTo(slice.start());
                any = true;
            }
            if (slice.data().length == 0) return any;
            any = true;
            buffer.append(slice.data());
            listener.output(kind, slice.data(), buffer.offset());
        }
    }

    /**
     * Passes on a chunk another reader read (see {@link OutputFeeds}) if it starts where this pump
     * stands on its output. A chunk this pump has passed already counts as taken.
     *
     * @return false when the chunk starts elsewhere: {@link #drainAll} then reads on from the files
     */
    public boolean take(SharedChunk chunk) {
        var kind = chunk.kind();
        var buffer = buffer(kind);
        if (buffer.offset() >= chunk.offsetAfter()) return true;
        if (buffer.offset() != chunk.start(kind)) return false;
        buffer.append(chunk.data());
        var other = kind == OutputKind.STDOUT ? OutputKind.STDERR : OutputKind.STDOUT;
        if (buffer(other).offset() == chunk.start(other)) listener.shared(chunk);
        else listener.output(kind, chunk.data(), buffer.offset());
        return true;
    }

    /** Where this pump stands on an output: the offset after what it has passed on. */
    public long offset(OutputKind kind) {
        return buffer(kind).offset();
    }

    private OutputBuffer buffer(OutputKind kind) {
        return kind == OutputKind.STDOUT ? out : err;
    }

    OutputBuffer stdoutBuffer() {
        return out;
    }

    OutputBuffer stderrBuffer() {
        return err;
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
