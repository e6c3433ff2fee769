package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.core.spi.SpawnSpec;
import io.stasis.testkit.Await;
import io.stasis.testkit.Commands;
import io.stasis.testkit.HostLeaks;
import io.stasis.testkit.IsolationSuite;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The lifecycle, runtime and isolation suites against gVisor's runsc (the one `./stasis setup`
 * installs, or STASIS_RUNSC), on a real btrfs pool with the busybox template; where gVisor differs
 * from runc by design, the hooks below say so and the tests of this class check what it does instead.
 */
@Tag("root")
class RunscRuntimeIT extends IsolationSuite {
    private static RuncTestHost host;
    private static SandboxRuntime runtime;

    @BeforeAll
    static void setUp() throws IOException {
        host = RuncTestHost.gvisor();
        runtime = host.runtime;
    }

    @AfterAll
    static void tearDown() throws IOException {
        host.close();
    }

    @Override
    protected SandboxRuntime runtime() {
        return runtime;
    }

    @Override
    protected boolean limitsShowInside() {
        return false;
    }

    @Override
    protected boolean hostKernelServesTheSandbox() {
        return false;
    }

    @Override
    protected boolean survivesItsOwnLimits() {
        return false;
    }

    @Override
    protected Path newRoot(SandboxId id) {
        return host.roots.createRoot(id, "tiny", Resources.DEFAULT.diskBytes());
    }

    @Override
    protected Path rootOf(SandboxId id) {
        return host.root(id);
    }

    @Override
    protected void deleteRoot(SandboxId id) {
        host.roots.deleteRoot(id);
    }

    /** An idle sentry uses CPU (its timers): a sandbox started ahead of demand waits frozen, using none, until it has an owner. */
    @Test
    void aSandboxStartedInTheBackgroundWaitsFrozenUsingNoCpu() throws InterruptedException {
        var id = SandboxId.random();
        track(id);
        runtime.create(new RuntimeSpec(id, newRoot(id), id.hostname(), Resources.DEFAULT).inBackground());
        assertThat(runtime.status(id)).isEqualTo(RuntimeStatus.FROZEN);
        String before = hostCgroupFile(id, "cpuacct", "cpuacct.usage");
        Thread.sleep(1000);
        assertThat(hostCgroupFile(id, "cpuacct", "cpuacct.usage")).isEqualTo(before);
        runtime.foreground(id);
        assertThat(runtime.status(id)).isEqualTo(RuntimeStatus.RUNNING);
        assertThat(Commands.run(runtime, id, "echo", "awake").stdout()).isEqualTo("awake\n");
    }

    @Test
    void aSandboxPastItsMemoryEndsWholeAndTheHostIsUnharmed() {
        var id = start(new Resources(1, 64, 512));
        var hog = new SpawnSpec(List.of("sh", "-c", "x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo survived"),
                Optional.empty(), Commands.ENV, Optional.empty());
        runtime.startProcess(id, Ids.randomSuffix(), hog, new byte[0]);
        // The host's OOM killer ends the sentry once the sandbox's memory is past its limit (seen to take 15-60 s here).
        Await.until("the sandbox to end", Duration.ofSeconds(120), () -> runtime.status(id) != SandboxRuntime.RuntimeStatus.RUNNING);
        assertThat(runtime.oomKills(id)).as("the host's out-of-memory killer ended it").isPositive();
        runtime.destroy(id);
        assertThat(HostLeaks.processesOf(Set.of(id))).isEmpty();
    }

    @Test
    void aForkBombEndsTheSandboxWithinItsHostTasks() {
        var resources = new Resources(1, 256, 64);
        var id = start(resources);
        // What holds the bomb: the host's cap on the sandbox's tasks.
        assertThat(hostCgroupFile(id, "pids", "pids.max")).isEqualTo(Integer.toString(RunscRuntime.hostLimits(resources).pids()));
        var bomb = new SpawnSpec(List.of("sh", "-c", "bomb() { bomb | bomb & }; bomb; sleep 1000"), Optional.empty(), Commands.ENV, Optional.empty());
        runtime.startProcess(id, Ids.randomSuffix(), bomb, new byte[0]);
        Await.until("the sandbox to end", Duration.ofSeconds(60), () -> runtime.status(id) != SandboxRuntime.RuntimeStatus.RUNNING);
        runtime.destroy(id);
        assertThat(HostLeaks.processesOf(Set.of(id))).isEmpty();
    }

    /**
     * The sentry and the gofer, left by the runsc that started them, are children of the sandbox's
     * own reaper (not of the host's process 1, which may reap late: a delete waits for it), and the
     * reaper ends with the sandbox, restored ones too.
     */
    @Test
    void aSandboxsHostProcessesAreReapedByItsOwnReaperWhichEndsWithIt() throws Exception {
        var id = start();
        var reapers = reapersOf(id);
        assertThat(reapers).hasSize(1);
        var image = newImage();
        runtime.checkpoint(id, image, false);
        Await.until("the first reaper to end with its sandbox", Duration.ofSeconds(10), () -> !isLive(reapers.getFirst()));
        runtime.restore(new RuntimeSpec(id, rootOf(id), id.hostname(), Resources.DEFAULT), image);
        var restored = reapersOf(id);
        assertThat(restored).hasSize(1).doesNotContain(reapers.getFirst());
        runtime.destroy(id);
        Await.until("the reaper to end with its sandbox", Duration.ofSeconds(10), () -> !isLive(restored.getFirst()));
    }

    /** The parents (distinct) of the sandbox's host processes that are not in its cgroup: its reaper, each named stasis-reaper. */
    private static List<Long> reapersOf(SandboxId id) throws IOException {
        var parents = new TreeSet<Long>();
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path proc : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                try {
                    if (!Files.readString(proc.resolve("cgroup")).contains("/" + id.value())) continue;
                    long parent = Long.parseLong(field(proc, "PPid"));
                    if (!Files.readString(Path.of("/proc/" + parent + "/cgroup")).contains("/" + id.value())) parents.add(parent);
                } catch (IOException e) {
                    // ended meanwhile
                }
            }
        }
        for (long parent : parents) assertThat(Files.readString(Path.of("/proc/" + parent + "/comm")).strip()).isEqualTo(HelperBinary.REAPER);
        return List.copyOf(parents);
    }

    private static boolean isLive(long pid) {
        try {
            return !field(Path.of("/proc/" + pid), "State").startsWith("Z");
        } catch (IOException e) {
            return false;
        }
    }

    private static String field(Path proc, String name) throws IOException {
        return Files.readAllLines(proc.resolve("status")).stream().filter(l -> l.startsWith(name + ":"))
                .map(l -> l.substring(name.length() + 1).strip()).findFirst().orElseThrow(() -> new IOException("no " + name));
    }

    /**
     * runsc starts and restores a sandbox without its CPU quota, which comes as soon as runsc returns:
     * runsc's own start runs in the sandbox's cgroup, where a quota of one core throttled a restore.
     * A crash in between leaves the limits in a file beside the bundle: adopting the sandbox applies them.
     */
    @Test
    void theCpuQuotaComesOnceRunscReturnsAndAfterACrashInBetweenWithTheAdoption() throws IOException {
        var resources = new Resources(0.5, 256, 512);
        var id = start(resources);
        Path bundle = host.dataDir.resolve("runtime").resolve("bundles").resolve(id.value());
        Path deferred = bundle.resolve("limits.deferred");
        assertThat(hostCgroupFile(id, "cpu", "cpu.cfs_quota_us")).isEqualTo("50000");
        assertThat(deferred).doesNotExist();
        assertThat(new ObjectMapper().readTree(bundle.resolve("config.json").toFile()).at("/linux/resources/cpu/quota").asLong())
                .as("what a later restore reads").isEqualTo(50_000);

        var image = newImage();
        runtime.checkpoint(id, image, false);
        runtime.restore(new RuntimeSpec(id, rootOf(id), id.hostname(), resources), image);
        assertThat(hostCgroupFile(id, "cpu", "cpu.cfs_quota_us")).isEqualTo("50000");
        assertThat(deferred).doesNotExist();

        // The service died after runsc started the sandbox, before the quota: no quota, the limits still in their file.
        Files.writeString(hostCgroup(id, "cpu").resolve("cpu.cfs_quota_us"), "-1");
        Files.writeString(deferred, "{\"cpus\": 0.5, \"memoryMb\": 256, \"pids\": 1568, \"diskMb\": 10240}");
        runtime.adopt(id);
        assertThat(hostCgroupFile(id, "cpu", "cpu.cfs_quota_us")).isEqualTo("50000");
        assertThat(deferred).doesNotExist();
        runtime.destroy(id);
    }

    /**
     * The service died in a checkpoint while runsc held the tasks for the root's snapshot, with
     * stasis-init off its socket (an Error stands for the death: nothing undoes it). The
     * reconciler's thaw runs the tasks and its adoption has init bind again.
     */
    @Test
    void aCheckpointCutShortWhileRunscHeldTheTasksRunsOnOnceAdopted() {
        var id = start();
        var image = newImage();
        assertThatThrownBy(() -> runtime.checkpoint(id, image, () -> {
            throw new AssertionError("the service dies here");
        })).isInstanceOf(AssertionError.class);
        assertThat(runtime.status(id)).as("held by runsc").isEqualTo(RuntimeStatus.FROZEN);

        runtime.thaw(id);
        runtime.adopt(id);
        assertThat(runtime.status(id)).isEqualTo(RuntimeStatus.RUNNING);
        assertThat(Commands.run(runtime, id, "echo", "back").stdout()).isEqualTo("back\n");
        runtime.deleteImage(image);
    }

    /**
     * A runsc killed as it booted a sandbox leaves its control socket file: in the state root, where
     * the next boot's runsc then cannot make its own and makes it in /run, which no delete removes
     * (tool kills during starts left such files in /run). A boot removes them first, a destroy after.
     */
    @Test
    void controlSocketFilesAnEarlierRunscLeftGoWithTheNextBootAndTheDestroy() throws IOException {
        var id = SandboxId.random();
        String name = "runsc-" + id.value() + ".sock";
        Path inStateRoot = host.dataDir.resolve("runtime/runsc").resolve(name);
        Path inRun = Path.of("/run").resolve(name);
        Files.createDirectories(inStateRoot.getParent());
        for (Path left : List.of(inStateRoot, inRun)) Files.writeString(left, "left by a killed runsc");
        try {
            track(id);
            runtime.create(new RuntimeSpec(id, newRoot(id), id.hostname(), Resources.DEFAULT));
            assertThat(Commands.run(runtime, id, "echo", "booted").stdout()).isEqualTo("booted\n");
            assertThat(inRun).as("the boot's socket is in the state root, not in /run").doesNotExist();
            assertThat(inStateRoot).as("the boot's own socket").exists();
            runtime.destroy(id);
            assertThat(inStateRoot).doesNotExist();
            assertThat(inRun).doesNotExist();
        } finally {
            Files.deleteIfExists(inRun);
        }
    }

    @Test
    void theHostPidsLimitLeavesRoomForTheSentrysOwnTasks() {
        var limits = RunscRuntime.hostLimits(new Resources(0.5, 256, 100, 1024));
        assertThat(limits.pids()).isEqualTo(332);
        assertThat(limits.memoryMb()).isEqualTo(256);
        assertThat(limits.cpus()).isEqualTo(0.5);
    }
}
