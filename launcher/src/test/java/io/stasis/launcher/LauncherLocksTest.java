package io.stasis.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher's locks (scripts/lib/common.sh): a fresh machine's set-up took the setup lock for
 * the apt packages and again for CRIU, and waited for itself forever.
 */
class LauncherLocksTest {
    @TempDir
    Path tmp;

    private String lock() {
        return Bash.quote(tmp.resolve("setup.lock").toString());
    }

    @Test
    void aLockTheLauncherHoldsIsTakenAgainAtOnce() throws Exception {
        var result = Bash.run("lock_acquire " + lock() + " setup\nlock_acquire " + lock() + " setup\n"
                + "lock_acquire " + Bash.quote(tmp.resolve("build.lock").toString()) + " build\necho held");
        assertThat(result.code()).isZero();
        assertThat(result.out()).isEqualTo("held\n");
        assertThat(result.err()).doesNotContain("waiting");
    }

    @Test
    void noChildOfTheLauncherInheritsALock() throws Exception {
        // While held: a child has no descriptor of the lock file, and cannot take it either.
        var result = Bash.run("lock_acquire " + lock() + " setup\n"
                + "ls -l /proc/self/fd | grep -c " + Bash.quote(tmp.toString()) + " || true\n"
                + "flock -n " + lock() + " true && echo free || echo locked\n"
                + "sleep 30 >/dev/null 2>&1 &\necho $! > " + Bash.quote(tmp.resolve("child").toString()));
        assertThat(result.out()).isEqualTo("0\nlocked\n");
        // The launcher is gone, its child still runs: the lock is free.
        long child = Long.parseLong(Files.readString(tmp.resolve("child")).strip());
        try {
            assertThat(ProcessHandle.of(child)).isPresent();
            assertThat(Bash.run("flock -n " + lock() + " true && echo free").out()).isEqualTo("free\n");
        } finally {
            ProcessHandle.of(child).ifPresent(ProcessHandle::destroy);
        }
    }

    @Test
    void aSecondLauncherSaysOnceThatItWaitsAndGoesOnWhenTheFirstIsDone() throws Exception {
        Process first = Bash.start("lock_acquire " + lock() + " setup\necho held\nsleep 1\nlock_release_all\necho released\nexec sleep 5");
        try {
            assertThat(new String(first.getInputStream().readNBytes(5), StandardCharsets.UTF_8)).isEqualTo("held\n");
            long start = System.nanoTime();
            var second = Bash.run("lock_acquire " + lock() + " setup\nlock_acquire " + lock() + " setup\necho second");
            assertThat(second.out()).isEqualTo("second\n");
            assertThat(second.err().lines().filter(l -> l.contains("waiting for another ./stasis to finish the setup"))).hasSize(1);
            assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(4)); // released after 1 s, not at exit
        } finally {
            first.destroy();
            first.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aKilledLauncherLeavesNoLockBehind() throws Exception {
        Process first = Bash.start("lock_acquire " + lock() + " setup\nsleep 30 &\necho \"held $!\"\nwait");
        String held = new BufferedReader(new InputStreamReader(first.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertThat(held).startsWith("held ");
        long sleeper = Long.parseLong(held.substring(5));
        try {
            first.destroyForcibly(); // SIGKILL
            first.waitFor(10, TimeUnit.SECONDS);
            var second = Bash.run("lock_acquire " + lock() + " setup\necho second");
            assertThat(second.out()).isEqualTo("second\n");
            assertThat(second.err()).doesNotContain("waiting");
        } finally {
            ProcessHandle.of(sleeper).ifPresent(ProcessHandle::destroy);
        }
    }
}
