package io.stasis.fs.linux;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The host tools the tests need to build layouts (mounts, FIFOs); the only test class that starts processes. */
final class HostCommands {
    private static final long TIMEOUT_SECONDS = 20;

    private HostCommands() {
    }

    static void mkfifo(Path path) {
        run("mkfifo", path.toString());
    }

    static void bindMount(Path source, Path target) {
        run("mount", "--bind", source.toString(), target.toString());
    }

    static void mountTmpfs(Path target) {
        run("mount", "-t", "tmpfs", "-o", "size=1m", "stasis-test", target.toString());
    }

    /** Unmounts, lazily if busy, so a failing test never leaves a mount behind. */
    static void umount(Path target) {
        try {
            run("umount", target.toString());
        } catch (IllegalStateException e) {
            run("umount", "-l", target.toString());
        }
    }

    private static void run(String... argv) {
        Process p = null;
        try {
            p = new ProcessBuilder(List.of(argv)).redirectErrorStream(true).start();
            Process started = p;
            var output = CompletableFuture.supplyAsync(() -> {
                try {
                    return new String(started.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    return e.toString();
                }
            }, Thread::startVirtualThread);
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) throw new IllegalStateException(String.join(" ", argv) + " timed out");
            if (p.exitValue() != 0)
                throw new IllegalStateException(String.join(" ", argv) + " exited " + p.exitValue() + ": " + output.join());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(String.join(" ", argv) + " interrupted", e);
        } finally {
            if (p != null && p.isAlive()) p.destroyForcibly();
        }
    }
}
