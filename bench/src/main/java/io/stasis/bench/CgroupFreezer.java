package io.stasis.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * The freeze itself, with nothing on top: a write of {@code FROZEN} (or {@code THAWED}) to a v1
 * cgroup's {@code freezer.state}, then reading it back until the kernel reports the state reached.
 * This is what the service's pause does underneath, and the floor of a pause call.
 */
final class CgroupFreezer {
    private static final Path FREEZER = Path.of("/sys/fs/cgroup/freezer");
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final Path state;

    private CgroupFreezer(Path state) {
        this.state = state;
    }

    /** The freezer of a cgroup such as {@code /stasis/sbx_x}; fails when this host has no v1 freezer there. */
    static CgroupFreezer of(String cgroupPath) {
        Path file = FREEZER.resolve(cgroupPath.replaceFirst("^/", "")).resolve("freezer.state");
        if (!Files.exists(file)) throw new IllegalStateException("no v1 freezer at " + file + " (the bench measures cgroup v1 hosts)");
        return new CgroupFreezer(file);
    }

    void freeze() {
        set("FROZEN");
    }

    void thaw() {
        set("THAWED");
    }

    boolean isThawed() {
        return read().equals("THAWED");
    }

    private void set(String wanted) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        write(wanted);
        long pause = 10_000;
        while (!read().equals(wanted)) {
            if (System.nanoTime() > deadline) throw new IllegalStateException(state + " did not reach " + wanted + " within " + TIMEOUT);
            // v1 stays FREEZING while a task sleeps uninterruptibly: writing again retries.
            if (wanted.equals("FROZEN")) write(wanted);
            LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, 5_000_000);
        }
    }

    private void write(String value) {
        try {
            Files.writeString(state, value);
        } catch (IOException e) {
            throw new UncheckedIOException("writing " + value + " to " + state, e);
        }
    }

    private String read() {
        try {
            return Files.readString(state).strip();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + state, e);
        }
    }
}
