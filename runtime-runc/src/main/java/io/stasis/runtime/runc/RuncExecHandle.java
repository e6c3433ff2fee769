package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExitStatus;
import io.stasis.core.exec.OutputKind;
import io.stasis.core.exec.Signal;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.ExecHandle;
import io.stasis.fs.linux.ConfinedRoot;
import io.stasis.fs.linux.Errno;
import io.stasis.fs.linux.LinuxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A process started by stasis-init. Its exit arrives on the connection that started it; its output
 * is read from the files stasis-init made inside the sandbox. Without a connection (a background
 * process looked up later, or a connection that broke because the sandbox was checkpointed), the
 * exit file written by stasis-init is watched instead.
 */
final class RuncExecHandle implements ExecHandle {
    private static final Duration EXIT_FILE_POLL = Duration.ofMillis(20);
    /** How long a follower waits between looks when its process's files cannot be watched. */
    private static final Duration UNWATCHED_POLL = Duration.ofMillis(50);

    private final SandboxId sandbox;
    private final ConfinedRoot root;
    private final InitConnection connection;
    private final String execId;
    private final long pid;
    private final CompletableFuture<ExitStatus> exit = new CompletableFuture<>();
    private final CompletableFuture<Void> connectionLost = new CompletableFuture<>();
    private final Runnable onClose;
    private final boolean removeFilesOnClose;
    private final OutputNotifier notifier;
    private OutputNotifier.Subscription changes;

    /**
     * @param connection         the connection that started the process and will carry its exit, or null
     * @param onClose            run once when the handle closes (the runtime stops tracking its connection)
     * @param removeFilesOnClose whether closing removes the process's files (a run-and-wait command's)
     */
    RuncExecHandle(SandboxId sandbox, ConfinedRoot root, InitConnection connection, String execId, long pid, Runnable onClose,
                   boolean removeFilesOnClose, OutputNotifier notifier) {
        this.notifier = notifier;
        this.sandbox = sandbox;
        this.root = root;
        this.connection = connection;
        this.execId = execId;
        this.pid = pid;
        this.onClose = onClose;
        this.removeFilesOnClose = removeFilesOnClose;
        if (connection == null) connectionLost.complete(null);
        else Thread.ofVirtual().name("exit-" + execId).start(this::awaitExitFrame);
    }

    static String dir(String execId) {
        return "/.stasis/proc/" + execId;
    }

    /** Removes a process's files ({@link #dir}), if they are there. */
    static void deleteFiles(ConfinedRoot root, String execId) {
        try {
            root.delete(dir(execId), true);
        } catch (LinuxException e) {
            if (!e.is(Errno.ENOENT) && !e.is(Errno.ENOTDIR)) throw e;
        }
    }

    private void awaitExitFrame() {
        try {
            var frame = connection.receive();
            if (frame.verb().equals("exit")) exit.complete(parse(frame));
            else connectionLost.complete(null);
        } catch (RuntimeException e) {
            connectionLost.complete(null);
        }
    }

    private static ExitStatus parse(InitFrame frame) {
        return frame.get("signal").map(s -> ExitStatus.killed(Integer.parseInt(s)))
                .orElseGet(() -> ExitStatus.exited((int) frame.getLong("code")));
    }

    @Override
    public long pid() {
        return pid;
    }

    @Override
    public void awaitOutput(Duration timeout) throws InterruptedException {
        if (changes == null) {
            changes = notifier.subscribe(root, dir(execId));
            return; // what happened before the watch began is for the caller's next read to see
        }
        changes.await(changes.live() || timeout.compareTo(UNWATCHED_POLL) < 0 ? timeout : UNWATCHED_POLL);
    }

    @Override
    public Optional<ExitStatus> awaitExit(Duration timeout) throws InterruptedException {
        if (timeout.isZero()) return exit.isDone() ? Optional.of(exit.join()) : connectionLost.isDone() ? readExitFile() : Optional.empty();
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            CompletableFuture.anyOf(exit, connectionLost).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return Optional.empty();
        } catch (ExecutionException e) {
            throw new IllegalStateException("neither future completes exceptionally", e);
        }
        if (exit.isDone()) return Optional.of(exit.join());
        while (true) {
            var fromFile = readExitFile();
            long left = deadline - System.nanoTime();
            if (fromFile.isPresent() || left <= 0) return fromFile;
            Thread.sleep(Math.max(1, Math.min(EXIT_FILE_POLL.toMillis(), left / 1_000_000)));
        }
    }

    private Optional<ExitStatus> readExitFile() {
        return readExit(root, execId);
    }

    /** The exit status stasis-init wrote for a process, if it has ended. */
    static Optional<ExitStatus> readExit(ConfinedRoot root, String execId) {
        if (root.sizeOf(dir(execId) + "/exit") < 0) return Optional.empty();
        String text = new String(root.readAt(dir(execId) + "/exit", 0, 64), StandardCharsets.US_ASCII).strip();
        try {
            if (text.startsWith("signal=")) return Optional.of(ExitStatus.killed(Integer.parseInt(text.substring(7))));
            if (text.startsWith("code=")) return Optional.of(ExitStatus.exited(Integer.parseInt(text.substring(5))));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    @Override
    public void killTree() {
        try (var control = InitConnection.open(sandbox, root)) {
            var reply = control.call(InitFrame.of("kill").with("pid", pid).with("signal", Signal.KILL.number()).with("tree", 1).build());
            if (!reply.verb().equals("ok"))
                throw StasisException.runtimeFailed(sandbox.value(), "kill", reply.get("msg").orElse(reply.toString()), null);
        }
    }

    @Override
    public byte[] read(OutputKind kind, long offset, int maxBytes) {
        String file = outputFile(kind);
        if (root.sizeOf(file) <= offset) return new byte[0];
        return root.readAt(file, offset, maxBytes);
    }

    @Override
    public long keptFrom(OutputKind kind) {
        String file = outputFile(kind);
        return root.sizeOf(file) <= 0 ? 0 : root.dataStart(file);
    }

    @Override
    public long dropBefore(OutputKind kind, long offset) {
        String file = outputFile(kind);
        return root.sizeOf(file) <= 0 ? 0 : root.dropBefore(file, offset);
    }

    private String outputFile(OutputKind kind) {
        return dir(execId) + (kind == OutputKind.STDOUT ? "/out" : "/err");
    }

    @Override
    public void close() {
        if (changes != null) changes.close();
        onClose.run();
        if (connection != null) connection.close();
        try {
            if (removeFilesOnClose) deleteFiles(root, execId);
        } finally {
            root.close();
        }
    }
}
