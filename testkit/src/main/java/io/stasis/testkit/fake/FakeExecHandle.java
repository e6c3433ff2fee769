package io.stasis.testkit.fake;

import io.stasis.core.exec.ExitStatus;
import io.stasis.core.exec.OutputKind;
import io.stasis.core.exec.Signal;
import io.stasis.core.spi.ExecHandle;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A process of {@link FakeSandboxRuntime}: output fixed when it starts, an exit that comes when the
 * fake says (at once for a command, on a signal for a background process).
 */
final class FakeExecHandle implements ExecHandle {
    private final long pid;
    private final byte[] stdout;
    private final byte[] stderr;
    private final CompletableFuture<ExitStatus> exit;

    FakeExecHandle(long pid, String stdout, String stderr, CompletableFuture<ExitStatus> exit) {
        this.pid = pid;
        this.stdout = stdout.getBytes(StandardCharsets.UTF_8);
        this.stderr = stderr.getBytes(StandardCharsets.UTF_8);
        this.exit = exit;
    }

    @Override
    public long pid() {
        return pid;
    }

    @Override
    public Optional<ExitStatus> awaitExit(Duration timeout) throws InterruptedException {
        try {
            return Optional.of(exit.get(timeout.toNanos(), TimeUnit.NANOSECONDS));
        } catch (TimeoutException e) {
            return Optional.empty();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    @Override
    public void awaitOutput(Duration timeout) throws InterruptedException {
        awaitExit(timeout);
    }

    @Override
    public void killTree() {
        exit.complete(ExitStatus.killed(Signal.KILL.number()));
    }

    @Override
    public byte[] read(OutputKind kind, long offset, int maxBytes) {
        byte[] all = kind == OutputKind.STDOUT ? stdout : stderr;
        int from = (int) Math.min(offset, all.length);
        return Arrays.copyOfRange(all, from, (int) Math.min(all.length, (long) from + maxBytes));
    }

    @Override
    public long keptFrom(OutputKind kind) {
        return 0;
    }

    @Override
    public long dropBefore(OutputKind kind, long offset) {
        return 0;
    }

    @Override
    public void close() {
    }
}
