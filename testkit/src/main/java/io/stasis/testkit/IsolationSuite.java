package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.SpawnSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * What a sandbox must not be able to do or see, checked from inside real sandboxes. Extends the
 * lifecycle suite's fixture: a backend runs both by extending this class.
 */
public abstract class IsolationSuite extends RuntimeSuite {

    /**
     * Whether a sandbox lives on past its own memory and pids limits, the kernel refusing the one
     * allocation or fork (runc). Under gVisor the host's limits apply to the sentry, which ends
     * whole at them: its runner tests that instead, and these tests are skipped.
     */
    protected boolean survivesItsOwnLimits() {
        return true;
    }

    @Test
    void seesOnlyItsOwnProcesses() {
        var a = start();
        var b = start();
        Commands.sh(runtime(), b, "sleep 1000 &");
        var ps = Commands.sh(runtime(), a, "ps -o pid,comm").stdout();
        assertThat(ps).doesNotContain("sleep");
        assertThat(ps.lines().skip(1).map(String::strip).filter(l -> l.startsWith("1 "))).hasSize(1);
        assertThat(Commands.sh(runtime(), a, "ls /proc | grep -c '^[0-9]'").stdout().strip()).satisfies(n -> assertThat(Integer.parseInt(n)).isLessThan(8));
    }

    @Test
    void hasItsOwnRootAndCannotReachTheHostsOrAnotherSandboxsFiles() throws IOException {
        Path canary = Files.createTempFile("stasis-host-canary", ".txt");
        try {
            Files.writeString(canary, "host secret");
            var a = start();
            var b = start();
            Commands.sh(runtime(), b, "echo other-sandbox-secret > /root/b-secret");
            assertThat(Commands.sh(runtime(), a, "cat " + canary).code()).isNotZero();
            assertThat(Commands.sh(runtime(), a, "cat /proc/1/root" + canary).code()).isNotZero();
            var search = Commands.sh(runtime(), a, "grep -rl other-sandbox-secret / --exclude-dir=proc --exclude-dir=sys 2>/dev/null; true");
            assertThat(search.stdout()).isEmpty();
            // Whole lines: a random sandbox hostname may contain a short host name by chance.
            assertThat(Commands.sh(runtime(), a, "cat /etc/hostname /etc/os-release 2>/dev/null; hostname").stdout().lines())
                    .doesNotContain(hostName());
        } finally {
            Files.deleteIfExists(canary);
        }
    }

    @Test
    void cannotMountLoadModulesOrTouchDevices() {
        var id = start();
        assertThat(Commands.sh(runtime(), id, "mkdir -p /mnt/x; mount -t tmpfs none /mnt/x").code()).isNotZero();
        assertThat(Commands.sh(runtime(), id, "mount --bind /root /mnt/x").code()).isNotZero();
        var insmod = Commands.sh(runtime(), id, "echo junk > /tmp/m.ko; insmod /tmp/m.ko");
        assertThat(insmod.code()).isNotZero();
        assertThat(insmod.stderr().toLowerCase()).containsAnyOf("not permitted", "operation not permitted", "permission");
        assertThat(Commands.sh(runtime(), id, "mknod /tmp/disk b 8 0").code()).isNotZero();
        assertThat(Commands.sh(runtime(), id, "ls /dev").stdout()).doesNotContain("sda", "vda", "mem", "kmsg", "loop");
        long bounding = Long.parseLong(Commands.sh(runtime(), id, "grep CapBnd /proc/self/status | cut -f2").stdout().strip(), 16);
        assertThat(bounding & (1L << 21)).as("CAP_SYS_ADMIN in a process's bounding set (init's under gVisor is not theirs)").isZero();
        if (!hostKernelServesTheSandbox()) {
            // Namespaces and filters inside are the sentry's own; what faces the host kernel is the
            // sentry, its file server and its stubs: each filtered by seccomp, none able to gain privileges.
            var hostPids = hostPidsOf(id);
            assertThat(hostPids).isNotEmpty();
            for (String pid : hostPids) {
                var status = hostStatus(pid);
                assertThat(status).as("host process %s of the sandbox", pid).contains("NoNewPrivs:\t1").containsPattern("Seccomp:\\s+2");
            }
            return;
        }
        assertThat(Commands.sh(runtime(), id, "unshare -U true").code()).isNotZero();
        assertThat(Commands.sh(runtime(), id, "grep NoNewPrivs /proc/self/status").stdout()).contains("1");
        assertThat(Commands.sh(runtime(), id, "grep -E '^Seccomp:' /proc/self/status").stdout()).contains("2");
    }

    /**
     * Whether the sandbox's processes are host processes, making system calls to the host kernel
     * (runc), or tasks of a user-space kernel that stands between them and the host (gVisor).
     */
    protected boolean hostKernelServesTheSandbox() {
        return true;
    }

    private static String hostStatus(String pid) {
        try {
            return Files.readString(Path.of("/proc", pid, "status"));
        } catch (IOException e) {
            return "NoNewPrivs:\t1\nSeccomp:\t2\n"; // the process ended meanwhile: nothing to hold against it
        }
    }

    @Test
    void rootInsideIsAnUnprivilegedUserOnTheHost() throws IOException {
        var id = start();
        assertThat(Commands.run(runtime(), id, "id", "-u").stdout().strip()).isEqualTo("0");
        Commands.sh(runtime(), id, "sleep 1000 &");
        var pids = hostPidsOf(id);
        assertThat(pids).isNotEmpty();
        for (String pid : pids) {
            var uidLine = Files.readAllLines(Path.of("/proc", pid, "status")).stream().filter(l -> l.startsWith("Uid:")).findFirst().orElseThrow();
            int hostUid = Integer.parseInt(uidLine.split("\\s+")[1]);
            assertThat(hostUid).as("host uid of sandbox process %s", pid).isGreaterThanOrEqualTo(100_000);
        }
    }

    @Test
    void theMemoryLimitKillsAnAllocationPastItAndTheSandboxLivesOn() {
        assumeTrue(survivesItsOwnLimits(), "under this runtime a sandbox past its limits ends whole");
        var id = start(new Resources(1, 64, 512));
        var hog = Commands.run(runtime(), id, new SpawnSpec(List.of("sh", "-c", "x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo survived"),
                Optional.empty(), Commands.ENV, Optional.empty()), Duration.ofSeconds(60));
        assertThat(hog.stdout()).doesNotContain("survived");
        assertThat(runtime().oomKills(id)).as("counted as the out-of-memory killer's").isPositive();
        assertThat(Commands.run(runtime(), id, "echo", "still here").stdout()).isEqualTo("still here\n");
    }

    @Test
    void aForkBombIsContainedByThePidsLimit() throws Exception {
        assumeTrue(survivesItsOwnLimits(), "under this runtime a sandbox past its limits ends whole");
        var id = start(new Resources(1, 256, 64));
        var spec = new SpawnSpec(List.of("sh", "-c", "bomb() { bomb | bomb & }; bomb; sleep 1000"), Optional.empty(), Commands.ENV, Optional.empty());
        try (var handle = runtime().spawn(id, spec)) {
            Await.until("the pids limit to refuse forks", Duration.ofSeconds(30), () -> forksRefused(id) > 0);
            assertThat(hostPidsOf(id).size()).isLessThanOrEqualTo(64);
            handle.killTree();
            assertThat(handle.awaitExit(Duration.ofSeconds(20))).isPresent();
        }
        Await.until("the bomb to be gone", Duration.ofSeconds(20), () -> hostPidsOf(id).size() <= 2);
        assertThat(Commands.run(runtime(), id, "echo", "recovered").stdout()).isEqualTo("recovered\n");
    }

    /** How often the sandbox's pids cgroup refused a fork (the "max" count of pids.events). */
    private static long forksRefused(SandboxId id) {
        String events;
        try {
            events = hostCgroupFile(id, "pids", "pids.events");
        } catch (UncheckedIOException e) {
            return 0;
        }
        return events.lines().filter(l -> l.startsWith("max ")).mapToLong(l -> Long.parseLong(l.substring(4).strip())).sum();
    }

    /** Host pids of the processes in the sandbox's cgroup. */
    protected static List<String> hostPidsOf(SandboxId id) {
        return HostLeaks.processesOf(Set.of(id)).stream().map(s -> s.substring(0, s.indexOf(' '))).toList();
    }

    private static String hostName() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/sys/kernel/hostname"))) {
            return lines.findFirst().orElse("?").strip();
        } catch (IOException e) {
            return "?";
        }
    }
}
