package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.OutputKind;
import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.ExecHandle;
import io.stasis.core.spi.RuntimeSpec;
import io.stasis.core.spi.SandboxRuntime;
import io.stasis.core.spi.SandboxRuntime.RuntimeStatus;
import io.stasis.core.spi.ProcessUser;
import io.stasis.core.spi.SpawnSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What every real {@link SandboxRuntime} must do with processes inside a sandbox, on top of
 * {@link RuntimeLifecycleSuite}. A backend's test extends this and supplies the runtime and fresh
 * roots made from a busybox template ("tiny").
 */
@Tag("root")
public abstract class RuntimeSuite extends RuntimeLifecycleSuite {
    @Override
    protected void assertNothingLeft(Set<SandboxId> destroyed) {
        assertThat(HostLeaks.processesOf(destroyed)).as("processes left").isEmpty();
        assertThat(HostLeaks.cgroupsOf(destroyed)).as("cgroups left").isEmpty();
        assertThat(HostLeaks.interfaces(testLink().hostInterface(), Duration.ofSeconds(15))).as("links left").isEmpty();
    }

    /** The root on the host is the sandbox's files, both ways at once: the files API and snapshots rely on it. */
    @Test
    void theRootOnTheHostIsTheSandboxsFilesBothWaysAtOnce() throws Exception {
        var id = start();
        for (String dir : List.of("/", "/tmp/")) {
            Path fromHost = rootOf(id).resolve(dir.substring(1) + "from-host");
            Files.writeString(fromHost, "written on the host");
            assertThat(Commands.run(runtime(), id, "cat", dir + "from-host").stdout()).as(dir).isEqualTo("written on the host");
            Files.writeString(fromHost, "changed on the host, longer");
            assertThat(Commands.run(runtime(), id, "cat", dir + "from-host").stdout()).as(dir).isEqualTo("changed on the host, longer");
            assertThat(Commands.sh(runtime(), id, "echo written inside > " + dir + "from-inside").code()).isZero();
            assertThat(rootOf(id).resolve(dir.substring(1) + "from-inside")).as(dir).hasContent("written inside");
        }
    }

    /**
     * A sandbox plugged into a link reaches the host at its gateway, and does again after a
     * hibernation (restored into a new network namespace, plugged into the same link): what the
     * host-side egress enforcement and the resolver rely on.
     */
    @Test
    void aLinkedSandboxReachesTheHostAtItsGatewayAndAgainAfterARestore() throws Exception {
        var link = testLink();
        var id = SandboxId.random();
        track(id);
        var spec = new RuntimeSpec(id, newRoot(id), id.hostname(), Resources.DEFAULT, Optional.of(link));
        runtime().create(spec);
        try (var server = new ServerSocket(0)) {
            var answering = Thread.ofVirtual().start(() -> answerHttp(server, "hello from the host\n"));
            String fetch = "wget -T 10 -q -O - http://" + link.gateway().getHostAddress() + ":" + server.getLocalPort() + "/";
            var first = Commands.sh(runtime(), id, fetch);
            assertThat(first.stdout()).as(first.stderr()).isEqualTo("hello from the host\n");
            assertThat(Commands.sh(runtime(), id, "cat /etc/resolv.conf").stdout()).contains(link.gateway().getHostAddress());
            if (checkpoints()) {
                var image = newImage();
                runtime().checkpoint(id, image, false);
                runtime().restore(spec, image);
                var again = Commands.sh(runtime(), id, fetch);
                assertThat(again.stdout()).as(again.stderr()).isEqualTo("hello from the host\n");
            }
            server.close();
            answering.join();
        }
    }

    /**
     * The link {@link #aLinkedSandboxReachesTheHostAtItsGatewayAndAgainAfterARestore} plugs: a host
     * interface and a /30 that no other test on this host uses at the same time (named after this JVM).
     */
    protected NetworkAttachment testLink() {
        long pid = ProcessHandle.current().pid();
        try {
            var base = new byte[] {10, (byte) 253, (byte) (pid % 256), (byte) (4 * ((pid / 256) % 64))};
            var gateway = InetAddress.getByAddress(new byte[] {base[0], base[1], base[2], (byte) (base[3] + 1)});
            var address = InetAddress.getByAddress(new byte[] {base[0], base[1], base[2], (byte) (base[3] + 2)});
            return new NetworkAttachment(0, "strt" + pid, gateway, address, 30, Optional.empty());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Answers every connection with {@code body} as HTTP/1.0 until the socket is closed. */
    private static void answerHttp(ServerSocket server, String body) {
        while (!server.isClosed()) {
            try (var connection = server.accept()) {
                connection.getInputStream().read(new byte[4096]);
                connection.getOutputStream().write(("HTTP/1.0 200 OK\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                        .getBytes(StandardCharsets.US_ASCII));
            } catch (IOException closed) {
                return;
            }
        }
    }

    @Test
    void execReturnsOutputAndExitCode() {
        var id = start();
        var result = Commands.sh(runtime(), id, "echo out; echo err >&2; exit 3");
        assertThat(result.stdout()).isEqualTo("out\n");
        assertThat(result.stderr()).isEqualTo("err\n");
        assertThat(result.code()).isEqualTo(3);
    }

    @Test
    void execPassesEnvironmentWorkingDirectoryAndStdin() {
        var id = start();
        var spec = new SpawnSpec(List.of("sh", "-c", "pwd; echo $GREETING; cat"), Optional.of("/tmp"),
                Map.of("PATH", "/bin:/usr/bin", "GREETING", "hello"), Optional.of("from stdin".getBytes()));
        var result = Commands.run(runtime(), id, spec, Duration.ofSeconds(10));
        assertThat(result.stdout()).isEqualTo("/tmp\nhello\nfrom stdin");
    }

    /** More than a pipe holds: the writes wait for the process to read, and all of it arrives in order. */
    @Test
    void aBackgroundProcessReadsWhatIsWrittenToItsStdinUntilItIsClosed() throws Exception {
        var id = start();
        String processId = Ids.randomSuffix();
        var spec = new SpawnSpec(List.of("sh", "-c", "read line; echo $line; wc -c"), Optional.empty(), Commands.ENV, Optional.empty(), true, Optional.empty());
        runtime().startProcess(id, processId, spec, new byte[0]);
        byte[] bulk = new byte[300_000];
        Arrays.fill(bulk, (byte) 'x');
        runtime().writeStdin(id, processId, "first line\n".getBytes(StandardCharsets.US_ASCII));
        runtime().writeStdin(id, processId, bulk);
        runtime().closeStdin(id, processId);
        try (var handle = runtime().attach(id, processId)) {
            assertThat(handle.awaitExit(Duration.ofSeconds(30))).hasValueSatisfying(exit -> assertThat(exit.exitCode()).isZero());
            assertThat(Commands.readAll(handle, OutputKind.STDOUT).lines().map(String::strip).toList())
                    .containsExactly("first line", Integer.toString(bulk.length));
        }
        assertThatThrownBy(() -> runtime().writeStdin(id, processId, "late".getBytes(StandardCharsets.US_ASCII)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_STATE));
    }

    @Test
    void aProcessOnATerminalSeesItsSizeAndReadsWhatIsTyped() throws Exception {
        var id = start();
        String processId = Ids.randomSuffix();
        var spec = new SpawnSpec(List.of("sh", "-c", "stty size; read line; echo got:$line; stty size"), Optional.empty(), Commands.ENV,
                Optional.empty(), false, Optional.of(new SpawnSpec.TerminalSize(100, 30)));
        runtime().startProcess(id, processId, spec, new byte[0]);
        try (var handle = runtime().attach(id, processId)) {
            Await.until("its size", Duration.ofSeconds(10), () -> Commands.readAll(handle, OutputKind.STDOUT).contains("30 100"));
            runtime().resizeTerminal(id, processId, new SpawnSpec.TerminalSize(120, 40));
            runtime().writeStdin(id, processId, "typed\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(handle.awaitExit(Duration.ofSeconds(10))).hasValueSatisfying(exit -> assertThat(exit.exitCode()).isZero());
            assertThat(Commands.readAll(handle, OutputKind.STDOUT)).contains("got:typed").contains("40 120");
        }
    }

    @Test
    void stdinOfAProcessStartedWithoutItIsNotOpen() {
        var id = start();
        String processId = Ids.randomSuffix();
        runtime().startProcess(id, processId, new SpawnSpec(List.of("sleep", "1000"), Optional.empty(), Commands.ENV, Optional.empty()),
                new byte[0]);
        assertThatThrownBy(() -> runtime().writeStdin(id, processId, "x".getBytes(StandardCharsets.US_ASCII)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_STATE));
    }

    @Test
    void aMissingProgramEndsWith127() {
        var id = start();
        var result = Commands.run(runtime(), id, "no-such-program");
        assertThat(result.code()).isEqualTo(127);
        assertThat(result.stderr()).contains("no-such-program");
    }

    /** A process run as a user has its ids and groups, and writes files as them; root's are root's. */
    @Test
    void aProcessRunsAsTheUserItIsGiven() {
        var id = start();
        var spec = new SpawnSpec(List.of("sh", "-c", "id -u; id -g; id -G; touch /tmp/by-user; stat -c %u:%g /tmp/by-user"),
                Optional.of("/tmp"), Commands.ENV, Optional.empty()).as(Optional.of(new ProcessUser(1000, 1001, List.of(27, 100))));
        var result = Commands.run(runtime(), id, spec, Duration.ofSeconds(10));
        assertThat(result.stdout()).as(result.stderr()).isEqualTo("1000\n1001\n1001 27 100\n1000:1001\n");
        var denied = Commands.run(runtime(), id, new SpawnSpec(List.of("sh", "-c", "echo no > /root/x"), Optional.of("/tmp"), Commands.ENV,
                Optional.empty()).as(Optional.of(new ProcessUser(1000, 1000, List.of()))), Duration.ofSeconds(10));
        assertThat(denied.code()).isNotZero();
        assertThat(Commands.sh(runtime(), id, "id -u").stdout()).isEqualTo("0\n");
    }

    @Test
    void aMissingWorkingDirectoryIsRefused() {
        var id = start();
        var spec = new SpawnSpec(List.of("true"), Optional.of("/no/such/dir"), Commands.ENV, Optional.empty());
        assertThatThrownBy(() -> runtime().spawn(id, spec))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST));
    }

    @Test
    void killTreeEndsTheProcessAndEverythingItStarted() throws Exception {
        var id = start();
        var spec = new SpawnSpec(List.of("sh", "-c", "sleep 1000 & sleep 1000 & setsid sleep 1000 & echo started; wait"),
                Optional.empty(), Commands.ENV, Optional.empty());
        try (ExecHandle handle = runtime().spawn(id, spec)) {
            Await.until("the script to start its children", Duration.ofSeconds(10),
                    () -> Commands.readAll(handle, OutputKind.STDOUT).contains("started"));
            handle.killTree();
            var exit = handle.awaitExit(Duration.ofSeconds(10));
            assertThat(exit).isPresent();
            assertThat(exit.get().signal()).contains("KILL");
        }
        Await.until("every sleep to be gone", Duration.ofSeconds(10),
                () -> Commands.sh(runtime(), id, "ps -o comm | grep -c sleep || true").stdout().strip().equals("0"));
    }

    @Test
    void updatedLimitsHoldInsideTheSandbox() {
        var id = start();
        runtime().updateResources(id, new Resources(0.5, 96, 77));
        if (!limitsShowInside()) {
            assertThat(hostCgroupFile(id, "memory", "memory.limit_in_bytes")).isEqualTo(Long.toString(96L << 20));
            assertThat(hostCgroupFile(id, "cpu", "cpu.cfs_quota_us")).isEqualTo("50000");
            assertThat(Long.parseLong(hostCgroupFile(id, "pids", "pids.max"))).isGreaterThanOrEqualTo(77);
            return;
        }
        var limits = Commands.sh(runtime(), id, "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max "
                + "/sys/fs/cgroup/cpu/cpu.cfs_quota_us").stdout().lines().toList();
        assertThat(limits).containsExactly(Long.toString(96L << 20), "77", "50000");
    }

    /**
     * Whether the sandbox's own /sys/fs/cgroup shows the host's limits on it (runc); under gVisor it
     * shows the sentry's cgroupfs, and the limits hold on the host's cgroups of the sandbox instead.
     */
    protected boolean limitsShowInside() {
        return true;
    }

    /** Below the usual weight of a nice-0 task (1024) in the sandbox's host cgroup. */
    @Override
    protected boolean runsInBackground(SandboxId id) {
        return Long.parseLong(hostCgroupFile(id, "cpu", "cpu.shares")) < 1024;
    }

    /** A file of the sandbox's cgroup in {@code controller} on the host, its content stripped. */
    protected static String hostCgroupFile(SandboxId id, String controller, String file) {
        try {
            return Files.readString(hostCgroup(id, controller).resolve(file)).strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The sandbox's cgroup in {@code controller} on the host (v1). */
    protected static Path hostCgroup(SandboxId id, String controller) {
        return HostLeaks.cgroupsOf(Set.of(id)).stream().map(Path::of)
                .filter(p -> p.startsWith(Path.of("/sys/fs/cgroup", controller))).findFirst()
                .orElseThrow(() -> new AssertionError("no " + controller + " cgroup of " + id));
    }

    @Test
    void largeOutputArrivesWhole() {
        var id = start();
        var result = Commands.sh(runtime(), id, "head -c 3000000 /dev/zero | tr '\\0' x");
        assertThat(result.stdout()).hasSize(3_000_000);
    }

    @Test
    void processesSurviveTheHandle() throws Exception {
        var id = start();
        try (var handle = runtime().spawn(id, new SpawnSpec(List.of("sh", "-c", "sleep 1000 &"), Optional.empty(), Commands.ENV, Optional.empty()))) {
            assertThat(handle.awaitExit(Duration.ofSeconds(10))).isPresent();
        }
        // The forked child may not have exec'd sleep yet when sh has ended: wait for it, then check it stays.
        Await.until("the background sleep running", Duration.ofSeconds(5),
                () -> Commands.sh(runtime(), id, "ps -o comm | grep -c sleep").stdout().strip().equals("1"));
        Thread.sleep(200);
        assertThat(Commands.sh(runtime(), id, "ps -o comm | grep -c sleep").stdout().strip()).isEqualTo("1");
    }

    @Test
    void destroyEndsEverythingAndIsIdempotent() {
        var id = start();
        Commands.sh(runtime(), id, "sleep 1000 &");
        runtime().destroy(id);
        assertThat(runtime().status(id)).isEqualTo(RuntimeStatus.UNKNOWN);
        assertThat(runtime().listOwned()).doesNotContain(id);
        assertThat(HostLeaks.processesOf(Set.of(id))).isEmpty();
        runtime().destroy(id);
        assertThatThrownBy(() -> Commands.run(runtime(), id, "true")).isInstanceOf(StasisException.class);
    }

    /**
     * The CPU time the idle ladder judges a sandbox by is its processes': a sandbox whose process
     * sleeps counts as idle whatever its runtime spends beside it (gVisor's sentry keeps ~5% of a
     * core), and one whose process spins counts it.
     */
    @Test
    void theCpuUsageIsTheSandboxsProcessesOwn() {
        var id = start();
        Commands.sh(runtime(), id, "sleep 1000 >/dev/null 2>&1 &");
        LockSupport.parkNanos(Duration.ofMillis(500).toNanos()); // gVisor charges a command's CPU in 10 ms ticks, some late
        var before = runtime().cpuUsage(id);
        LockSupport.parkNanos(Duration.ofSeconds(2).toNanos());
        assertThat(runtime().cpuUsage(id).minus(before)).as("asleep for 2 s").isLessThanOrEqualTo(Duration.ofMillis(20));
        var busy = runtime().cpuUsage(id);
        Commands.sh(runtime(), id, "end=$(($(date +%s) + 2)); while [ $(date +%s) -lt $end ]; do :; done");
        assertThat(runtime().cpuUsage(id).minus(busy)).as("spinning for 1-2 s").isGreaterThan(Duration.ofMillis(300));
    }

    @Test
    void concurrentExecsAllComplete() throws Exception {
        var id = start();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            var futures = new ArrayList<Future<Commands.Result>>();
            for (int i = 0; i < 40; i++) {
                int n = i;
                futures.add(executor.submit(() -> Commands.sh(runtime(), id, "echo " + n)));
            }
            for (int i = 0; i < futures.size(); i++) assertThat(futures.get(i).get().stdout()).isEqualTo(i + "\n");
        }
    }
}
