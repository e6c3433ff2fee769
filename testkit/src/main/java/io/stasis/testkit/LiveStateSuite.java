package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.exec.OutputKind;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.core.spi.SpawnSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Freezing, dumping and restoring process trees, against a real runtime and real CRIU: memory,
 * listening and established sockets, files and in-flight commands survive; copies diverge.
 */
public abstract class LiveStateSuite extends RuntimeSuite {
    /** A writable copy of {@code source}'s root for {@code copy} (what a fork gets). */
    protected abstract Path copyRoot(SandboxId source, SandboxId copy);

    /**
     * Puts a writable copy of {@code source}'s root where {@code id}'s root is, its old root aside,
     * as a fork into a warm sandbox does before {@link io.stasis.core.spi.SandboxRuntime#reroot};
     * returns the path.
     */
    protected abstract Path replaceRoot(SandboxId id, SandboxId source);

    /** Deletes the old root {@link #replaceRoot} put aside: it fails while something still holds it. */
    protected abstract void deleteReplacedRoot(SandboxId id);

    private static final String COUNTER = CounterLoop.SCRIPT;

    private long count(SandboxId id) {
        for (int attempt = 0; ; attempt++) {
            String text = Commands.run(runtime(), id, "cat", "/tmp/count").stdout().strip();
            if (!text.isEmpty()) return Long.parseLong(text);
            if (attempt > 20) throw new AssertionError("no counter in " + id);
        }
    }

    private void awaitCountAbove(SandboxId id, long value) {
        Await.until("the counter of " + id + " to pass " + value, Duration.ofSeconds(20), () -> count(id) > value);
    }

    @Test
    void aFrozenSandboxUsesNoCpuAndContinuesWhenThawed() {
        var id = start();
        Commands.sh(runtime(), id, COUNTER);
        awaitCountAbove(id, 3);
        runtime().freeze(id);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.FROZEN);
        var cpuFrozen = runtime().cpuUsage(id);
        long before = Long.parseLong(new String(readFile(id, "/tmp/count")).strip());
        // An observation window: nothing may move during it.
        LockSupport.parkNanos(Duration.ofMillis(500).toNanos());
        assertThat(Long.parseLong(new String(readFile(id, "/tmp/count")).strip())).isEqualTo(before);
        assertThat(runtime().cpuUsage(id)).isEqualTo(cpuFrozen);
        runtime().freeze(id); // idempotent
        runtime().thaw(id);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.RUNNING);
        awaitCountAbove(id, before);
        runtime().thaw(id);
    }

    /**
     * A process waiting in a system call when the sandbox is paused or put in standby waits on after
     * it runs again, as it would have without the pause: here {@code cat} waits in the open of a FIFO
     * that nobody has opened for writing yet, and must then copy what a later writer sends.
     */
    @Test
    void aProcessWaitingInASystemCallWaitsOnAcrossPauseAndStandby() {
        var id = start();
        Commands.sh(runtime(), id, "mkfifo /tmp/in && (cat /tmp/in > /tmp/out; echo $? > /tmp/cat-exit) >/dev/null 2>&1 &");
        Await.until("cat to start", Duration.ofSeconds(10), () -> Commands.sh(runtime(), id, "grep -qx cat /proc/[0-9]*/comm").code() == 0);
        LockSupport.parkNanos(Duration.ofMillis(200).toNanos()); // into the open
        runtime().freeze(id);
        runtime().thaw(id);
        runtime().standby(id);
        runtime().thaw(id);
        var write = Commands.run(runtime(), id, new SpawnSpec(List.of("sh", "-c", "echo through > /tmp/in"), Optional.empty(),
                Commands.ENV, Optional.empty()), Duration.ofSeconds(10));
        assertThat(write.code()).as("the write found its reader").isZero();
        Await.until("cat to copy what was written and end", Duration.ofSeconds(10),
                () -> Commands.sh(runtime(), id, "cat /tmp/cat-exit 2>/dev/null").stdout().strip().equals("0"));
        assertThat(new String(readFile(id, "/tmp/out"))).isEqualTo("through\n");
    }

    @Test
    void aRerootedSandboxRunsOnItsNewRootAndSurvivesHibernation() {
        assumeTrue(runtime().canReroot(), "this runtime cannot give a running sandbox a new root");
        var source = start();
        Commands.sh(runtime(), source, "echo from-source > /root/marker");
        var warm = start();
        Commands.sh(runtime(), warm, "echo in-the-old-root > /root/old");

        runtime().reroot(warm, replaceRoot(warm, source));
        deleteReplacedRoot(warm); // nothing of the sandbox holds the old root any more

        assertThat(Commands.run(runtime(), warm, "cat", "/root/marker").stdout()).isEqualTo("from-source\n");
        assertThat(Commands.sh(runtime(), warm, "test -e /root/old || echo gone").stdout()).isEqualTo("gone\n");
        assertThat(Commands.run(runtime(), warm, "hostname").stdout().strip()).isEqualTo(warm.hostname());
        assertThat(Commands.sh(runtime(), warm, "test -e /proc/1/ns/mnt && test -c /dev/null && test -d /sys/fs/cgroup && echo mounted")
                .stdout()).as("the kernel filesystems came along").isEqualTo("mounted\n");
        Commands.sh(runtime(), warm, "echo written > /root/new");
        assertThat(new String(readFile(warm, "/root/new"))).isEqualTo("written\n");
        assertThat(Commands.sh(runtime(), source, "cat /root/new 2>&1 || true").stdout()).as("the source's root is its own").contains("No such file");

        // From now on it is a sandbox like any other: its processes hibernate and come back on the new root.
        Commands.sh(runtime(), warm, COUNTER);
        awaitCountAbove(warm, 3);
        var image = newImage();
        runtime().checkpoint(warm, image, false);
        runtime().restore(new RuntimeSpec(warm, rootOf(warm), warm.hostname(), Resources.DEFAULT), image);
        long after = count(warm);
        awaitCountAbove(warm, after);
        assertThat(Commands.run(runtime(), warm, "cat", "/root/marker").stdout()).isEqualTo("from-source\n");
    }

    @Test
    void hibernateAndRestoreKeepsMemoryFilesAndListeningSockets() {
        var id = start();
        Commands.sh(runtime(), id, COUNTER + " httpd -p 8080 -h /etc; echo just-before > /root/late-file");
        awaitCountAbove(id, 5);
        var image = newImage();
        long bytes = runtime().checkpoint(id, image, false);
        assertThat(bytes).isPositive();
        assertThat(runtime().imageSize(image)).isPresent();
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.UNKNOWN);
        assertThat(IsolationSuite.hostPidsOf(id)).isEmpty();
        long atDump = Long.parseLong(new String(readFile(id, "/tmp/count")).strip());

        runtime().restore(new RuntimeSpec(id, rootOf(id), id.hostname(), Resources.DEFAULT), image);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.RUNNING);
        long after = count(id);
        assertThat(after).isGreaterThanOrEqualTo(atDump).isLessThan(atDump + 40);
        awaitCountAbove(id, after);
        assertThat(Commands.run(runtime(), id, "cat", "/root/late-file").stdout()).isEqualTo("just-before\n");
        assertThat(Commands.sh(runtime(), id, "wget -q -O - http://127.0.0.1:8080/passwd | head -1").stdout()).startsWith("root:");
        assertThat(Commands.run(runtime(), id, "hostname").stdout().strip()).isEqualTo(id.hostname());
        assertThat(runtime().imageSize(image)).as("a restore leaves the image").isPresent();
    }

    @Test
    void anEstablishedConnectionInsideSurvivesHibernation() {
        var id = start();
        Commands.sh(runtime(), id, "(sleep 100000 | nc -l -p 9000 > /tmp/received) >/dev/null 2>&1 & sleep 0.2; "
                + "((while true; do echo tick; sleep 0.05; done) | nc 127.0.0.1 9000) >/dev/null 2>&1 &");
        Await.until("data over the connection", Duration.ofSeconds(10), () -> received(id) > 5);
        var image = newImage();
        runtime().checkpoint(id, image, false);
        long atDump = new String(readFile(id, "/tmp/received")).lines().count();
        runtime().restore(new RuntimeSpec(id, rootOf(id), id.hostname(), Resources.DEFAULT), image);
        Await.until("data to flow again after restore", Duration.ofSeconds(10), () -> received(id) > atDump + 5);
        assertThat(Commands.sh(runtime(), id, "netstat -tn | grep -c ESTABLISHED").stdout().strip()).isEqualTo("2");
    }

    private long received(SandboxId id) {
        return Commands.sh(runtime(), id, "wc -l < /tmp/received 2>/dev/null || echo 0").stdout().strip().transform(Long::parseLong);
    }

    @Test
    void aCommandRunningDuringHibernationFinishesAfterRestore() throws Exception {
        var id = start();
        var spec = new SpawnSpec(List.of("sh", "-c", "echo before; sleep 1; echo after"), Optional.empty(), Commands.ENV, Optional.empty());
        try (var handle = runtime().spawn(id, spec)) {
            Await.until("the command to start", Duration.ofSeconds(10), () -> Commands.readAll(handle, OutputKind.STDOUT).contains("before"));
            var image = newImage();
            runtime().checkpoint(id, image, false);
            runtime().restore(new RuntimeSpec(id, rootOf(id), id.hostname(), Resources.DEFAULT), image);
            var exit = handle.awaitExit(Duration.ofSeconds(20));
            assertThat(exit).isPresent();
            assertThat(exit.get().exitCode()).isZero();
            assertThat(Commands.readAll(handle, OutputKind.STDOUT)).isEqualTo("before\nafter\n");
        }
    }

    @Test
    void copiesRestoredFromOneImageRunSideBySideAndDiverge() {
        var parent = start();
        Commands.sh(runtime(), parent, COUNTER + " echo shared > /root/shared");
        awaitCountAbove(parent, 3);
        runtime().freeze(parent);
        var copies = new ArrayList<SandboxId>();
        for (int i = 0; i < 3; i++) {
            var copy = SandboxId.random();
            track(copy);
            copyRoot(parent, copy);
            copies.add(copy);
        }
        var image = newImage();
        runtime().checkpoint(parent, image, true);
        assertThat(runtime().status(parent)).as("a frozen sandbox stays frozen").isEqualTo(RuntimeStatus.FROZEN);
        runtime().thaw(parent);
        for (var copy : copies) runtime().restore(new RuntimeSpec(copy, rootOf(copy), copy.hostname(), Resources.DEFAULT), image);

        for (var copy : copies) {
            assertThat(Commands.run(runtime(), copy, "cat", "/root/shared").stdout()).isEqualTo("shared\n");
            assertThat(Commands.run(runtime(), copy, "hostname").stdout().strip())
                    .as("a copy's own hostname").isEqualTo(copy.hostname());
            awaitCountAbove(copy, 3);
        }
        Commands.sh(runtime(), copies.getFirst(), "echo mine > /root/only-first");
        assertThat(Commands.sh(runtime(), copies.get(1), "cat /root/only-first").code()).isNotZero();
        assertThat(Commands.sh(runtime(), parent, "cat /root/only-first").code()).isNotZero();
        var seeds = copies.stream().map(c -> new String(readFile(c, "/.stasis/instance"))).distinct().count();
        assertThat(seeds).as("each copy has its own instance seed").isEqualTo(copies.size());
    }

    /**
     * The files go with the image as its processes left them: under gVisor the sentry runs between
     * the freeze and its save, and a copy on files snapshotted before it failed to restore (ENOENT
     * on the file opened since).
     */
    @Test
    void aCopyFindsTheFileItsProcessOpenedLast() {
        var parent = start();
        Commands.sh(runtime(), parent, "(i=0; while :; do i=$((i+1)); exec 4> /root/open.$i; echo $i >&4; echo $i > /root/last; sleep 0.005; done)"
                + " >/dev/null 2>&1 &");
        Await.until("the loop's first files", Duration.ofSeconds(10), () -> last(parent) > 3);
        runtime().freeze(parent);
        var copy = SandboxId.random();
        track(copy);
        var image = newImage();
        runtime().checkpoint(parent, image, () -> {
            byte[] before = readFile(parent, "/root/last");
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
            assertThat(readFile(parent, "/root/last")).as("the loop stands still").isEqualTo(before);
            copyRoot(parent, copy);
        });
        runtime().thaw(parent);
        runtime().restore(new RuntimeSpec(copy, rootOf(copy), copy.hostname(), Resources.DEFAULT), image);

        long[] at = {-1};
        Await.until("the copy's loop", Duration.ofSeconds(10), () -> (at[0] = last(copy)) > 0);
        assertThat(Commands.run(runtime(), copy, "cat", "/root/open." + at[0]).stdout()).isEqualTo(at[0] + "\n");
        Await.until("the copy's loop going on", Duration.ofSeconds(10), () -> last(copy) > at[0] + 3);
    }

    /** The loop's last number, read again while it is being written. */
    private long last(SandboxId id) {
        String text = Commands.run(runtime(), id, "cat", "/root/last").stdout().strip();
        return text.isEmpty() ? -1 : Long.parseLong(text);
    }

    @Test
    void aRestoreOfAMissingImageFailsCleanly() {
        var id = SandboxId.random();
        track(id);
        Path root = newRoot(id);
        assertThatThrownBy(() -> runtime().restore(new RuntimeSpec(id, root, id.hostname(), Resources.DEFAULT), CheckpointId.random()))
                .hasMessageContaining("missing or incomplete");
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.UNKNOWN);
    }

    @Test
    void stopEndsTheProcessesGracefully() {
        var id = start();
        // Once its trap is set: a subshell starts with SIGTERM's default, and a stop right after the fork ended it silently.
        Commands.sh(runtime(), id, "(trap 'echo bye > /root/bye; exit 0' TERM; touch /root/trapped; while true; do sleep 0.1; done) >/dev/null 2>&1 & "
                + "while [ ! -e /root/trapped ]; do sleep 0.01; done");
        runtime().stop(id, Duration.ofSeconds(5));
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.UNKNOWN);
        assertThat(new String(readFile(id, "/root/bye"))).isEqualTo("bye\n");
    }

    private byte[] readFile(SandboxId id, String path) {
        try {
            return Files.readAllBytes(Path.of(rootOf(id).toString(), path));
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
