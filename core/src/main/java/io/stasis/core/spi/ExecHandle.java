package io.stasis.core.spi;

import io.stasis.core.exec.ExitStatus;
import io.stasis.core.exec.OutputKind;
import java.time.Duration;
import java.util.Optional;

/** A process started by {@link SandboxRuntime#spawn}. Not thread-safe; one owner at a time. */
public interface ExecHandle extends AutoCloseable {

    /** The process id as the sandbox sees it. */
    long pid();

    /**
     * Waits up to {@code timeout} for the process to end.
     *
     * @return its exit status, or empty if it still runs
     */
    Optional<ExitStatus> awaitExit(Duration timeout) throws InterruptedException;

    /**
     * Waits until the process's output or exit may have changed since this was last called, or
     * until {@code timeout}. It may return early without a change; it never misses one.
     */
    void awaitOutput(Duration timeout) throws InterruptedException;

    /** Kills the process and every process it started (its session and its descendants). */
    void killTree();

    /**
     * Reads output written so far.
     *
     * @return up to {@code maxBytes} bytes from {@code offset}; empty when there is nothing new
     */
    byte[] read(OutputKind kind, long offset, int maxBytes);

    /**
     * The first offset of an output still kept: bytes before it were dropped by {@link #dropBefore}
     * to bound the output's size (they read as zeros). Use {@link io.stasis.core.exec.KeptOutput}
     * to read without mistaking dropped bytes for output.
     */
    long keptFrom(OutputKind kind);

    /**
     * Drops the output before {@code offset} (rounded down to what the storage can free), keeping
     * every offset valid.
     *
     * @return {@link #keptFrom} afterwards
     */
    long dropBefore(OutputKind kind, long offset);

    /** Forgets the process: its output files are removed; a running process is not signalled. */
    @Override
    void close();
}
