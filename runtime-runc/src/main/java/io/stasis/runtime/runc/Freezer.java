package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * The cgroup freezer of a sandbox, written directly: a freeze or thaw costs a file write and a
 * short poll (sub-millisecond), where {@code runc pause} costs a process start. v1 writes
 * {@code freezer.state} and polls it until the kernel reports FROZEN; v2 writes
 * {@code cgroup.freeze} and polls {@code cgroup.events}.
 */
final class Freezer {
    private static final Path ROOT = Path.of("/sys/fs/cgroup");
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final boolean unified;

    Freezer() {
        this.unified = Files.exists(ROOT.resolve("cgroup.controllers"));
    }

    void freeze(SandboxId id, String cgroupPath) {
        set(id, cgroupPath, true);
    }

    void thaw(SandboxId id, String cgroupPath) {
        set(id, cgroupPath, false);
    }

    /** Whether the sandbox's tasks are frozen (or freezing); false if it has no freezer cgroup. */
    boolean isFrozen(String cgroupPath) {
        try {
            if (unified) return Files.readString(dir(cgroupPath).resolve("cgroup.freeze")).strip().equals("1");
            return !Files.readString(dir(cgroupPath).resolve("freezer.state")).strip().equals("THAWED");
        } catch (IOException e) {
            return false;
        }
    }

    private void set(SandboxId id, String cgroupPath, boolean frozen) {
        Path dir = dir(cgroupPath);
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        try {
            if (unified) Files.writeString(dir.resolve("cgroup.freeze"), frozen ? "1" : "0");
            else Files.writeString(dir.resolve("freezer.state"), frozen ? "FROZEN" : "THAWED");
            long pause = 20_000;
            while (!reached(dir, frozen)) {
                if (System.nanoTime() > deadline)
                    throw StasisException.runtimeFailed(id.value(), frozen ? "freeze" : "thaw",
                            "the cgroup did not reach the state within " + TIMEOUT.toSeconds() + " s", null);
                // v1 can stay FREEZING when a task is stuck in uninterruptible sleep: writing again retries.
                if (!unified && frozen) Files.writeString(dir.resolve("freezer.state"), "FROZEN");
                LockSupport.parkNanos(pause);
                pause = Math.min(pause * 2, 5_000_000);
            }
        } catch (IOException e) {
            throw StasisException.runtimeFailed(id.value(), frozen ? "freeze" : "thaw", e.getMessage(), e);
        }
    }

    private boolean reached(Path dir, boolean frozen) throws IOException {
        if (unified) {
            boolean isFrozen = Files.readAllLines(dir.resolve("cgroup.events")).contains("frozen 1");
            return isFrozen == frozen;
        }
        String state = Files.readString(dir.resolve("freezer.state")).strip();
        return frozen ? state.equals("FROZEN") : state.equals("THAWED");
    }

    private Path dir(String cgroupPath) {
        return SandboxCgroups.dir(unified ? "" : "freezer", cgroupPath);
    }
}
