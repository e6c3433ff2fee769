package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.sdk.ConflictException;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ExecOutputListener;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.ForkRequest;
import io.stasis.sdk.InvalidRequestException;
import io.stasis.sdk.ListSandboxesRequest;
import io.stasis.sdk.NotFoundException;
import io.stasis.sdk.QuotaExceededException;
import io.stasis.testkit.Await;
import io.stasis.testkit.HostLeaks;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The sandbox, exec and files API end to end through the Java SDK, against a real service. */
@Tag("root")
class SandboxApiIT {
    private static ServiceFixture service;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start();
    }

    @AfterEach
    void deleteSandboxes() {
        service.deleteSandboxes();
    }

    @AfterAll
    static void stop() {
        service.close();
    }

    @EachRuntime
    void createGetListAndDelete(String runtime) {
        ServiceFixture.assumeRuntime(runtime);
        var sandboxes = service.client.sandboxes();
        var created = sandboxes.create(CreateSandboxRequest.builder().runtime(runtime).template("tiny").name("crud-one")
                .env("GREETING", "hi").metadata("team", "blue").cpus(0.5).memoryMb(128).pids(64).build());
        assertThat(created.id()).startsWith("sbx_");
        assertThat(created.state()).isEqualTo("running");
        assertThat(created.resources().memoryMb()).isEqualTo(128);
        assertThat(sandboxes.get("crud-one").id()).isEqualTo(created.id());
        assertThat(sandboxes.list(ListSandboxesRequest.builder().metadata("team", "blue").build()).items())
                .extracting(s -> s.id()).containsExactly(created.id());
        assertThat(sandboxes.list(ListSandboxesRequest.builder().metadata("team", "red").build()).items()).isEmpty();
        assertThat(created.exec("sh", "-c", "echo $GREETING").stdout()).isEqualTo("hi\n");

        sandboxes.delete("crud-one");
        assertThatThrownBy(() -> sandboxes.get(created.id())).isInstanceOf(NotFoundException.class);
        assertThat(HostLeaks.processesOf(Set.of(new SandboxId(created.id())))).isEmpty();
    }

    /**
     * A full disk stops no live-state operation: a sandbox whose root is at its limit hibernates,
     * resumes, takes a memory checkpoint and is forked, its processes and their memory whole (the
     * service's own files in a root, such as /.stasis/instance after a restore, must not need room).
     */
    @EachRuntime
    void aSandboxWithAFullDiskHibernatesResumesAndForks(String runtime) {
        ServiceFixture.assumeRuntime(runtime);
        var sandboxes = service.client.sandboxes();
        var sandbox = sandboxes.create(CreateSandboxRequest.builder().runtime(runtime).template("tiny").diskMb(64).build());
        var ids = new ArrayList<String>(List.of(sandbox.id()));
        try {
            // The counter lives in memory (/dev/shm): nothing can be written to the root once it is full.
            sandbox.exec("sh", "-c", "(i=0; while true; do i=$((i+1)); echo $i > /dev/shm/count.new; mv /dev/shm/count.new /dev/shm/count;"
                    + " sleep 0.05; done) >/dev/null 2>&1 &");
            sandbox.exec("sh", "-c", "dd if=/dev/zero of=/root/big bs=1M count=100 2>/dev/shm/err; echo $? >/dev/shm/status");
            assertThatThrownBy(() -> sandbox.exec("true")).isInstanceOf(QuotaExceededException.class);

            assertThat(sandbox.hibernate().state()).isEqualTo("hibernated");
            assertThat(sandbox.resume().state()).isEqualTo("running");
            var checkpoint = sandbox.checkpoint("full", true);
            var fork = sandbox.fork(ForkRequest.builder().checkpoint(checkpoint.id()).build()).getFirst();
            ids.add(fork.id());
            assertThat(fork.state()).isEqualTo("running");

            // The fork wrote nothing itself: its disk is not full. The parent's is until what filled it is
            // deleted both in its root and with the checkpoint holding it (and the fork sharing it).
            for (var copy : List.of(fork, sandbox)) {
                if (copy == sandbox) {
                    sandboxes.delete(fork.id());
                    ids.remove(fork.id());
                    service.client.checkpoints().delete(checkpoint.id());
                    copy.files().delete("/root/big");
                    // btrfs frees the extents of deleted snapshots in the background.
                    Await.until("room on the disk of " + copy.id(), Duration.ofSeconds(60), () -> {
                        try {
                            return copy.exec("true").exitCode() == 0;
                        } catch (QuotaExceededException e) {
                            return false;
                        }
                    });
                }
                long count = Long.parseLong(copy.exec("cat", "/dev/shm/count").stdout().strip());
                Await.until("the counter of " + copy.id() + " to go on", Duration.ofSeconds(10),
                        () -> Long.parseLong(copy.exec("cat", "/dev/shm/count").stdout().strip()) > count);
                assertThat(copy.exec("cat", "/dev/shm/status").stdout()).isEqualTo("1\n");
            }
        } finally {
            for (String id : ids) sandboxes.delete(id);
        }
    }

    /** A start writes the sandbox's boot id into its root: a full disk must not keep it stopped. */
    @EachRuntime
    void aStoppedSandboxWithAFullDiskStartsAgain(String runtime) {
        ServiceFixture.assumeRuntime(runtime);
        var sandboxes = service.client.sandboxes();
        var sandbox = sandboxes.create(CreateSandboxRequest.builder().runtime(runtime).template("tiny").diskMb(64).build());
        try {
            sandbox.exec("sh", "-c", "dd if=/dev/zero of=/root/big bs=1M count=100 2>/dev/null; true");
            assertThat(sandbox.stop().state()).isEqualTo("stopped");
            assertThat(sandbox.start().state()).isEqualTo("running");
            assertThatThrownBy(() -> sandbox.exec("true")).isInstanceOf(QuotaExceededException.class);
            sandbox.files().delete("/root/big");
            assertThat(sandbox.exec("echo", "room").stdout()).isEqualTo("room\n");
        } finally {
            sandboxes.delete(sandbox.id());
        }
    }

    /** The disk limit, enforced for real: dd inside the sandbox, in it and in a fork of it (SECURITY.md). */
    @EachRuntime
    void writingPastTheDiskSizeFailsInsideTheSandboxWhichStaysHealthy(String runtime) {
        ServiceFixture.assumeRuntime(runtime);
        var sandboxes = service.client.sandboxes();
        var sandbox = sandboxes.create(CreateSandboxRequest.builder().runtime(runtime).template("tiny").diskMb(64).build());
        var ids = new ArrayList<String>(List.of(sandbox.id()));
        try {
            assertThat(sandbox.resources().diskMb()).isEqualTo(64);
            assertThat(sandboxes.get(sandbox.id()).resources().diskMb()).isEqualTo(64);

            // While the disk is full nothing more can be written to it, a command's output files
            // included (they live on it): dd's message and status go to a tmpfs, read back after.
            sandbox.exec("sh", "-c", "dd if=/dev/zero of=/root/big bs=1M count=100 2>/dev/shm/err; echo $? >/dev/shm/status");
            // Full: no command can start (its output would be lost), and the API says why...
            assertThatThrownBy(() -> sandbox.exec("true")).isInstanceOf(QuotaExceededException.class)
                    .hasMessageContaining("disk of sandbox " + sandbox.id() + " is full");
            assertThatThrownBy(() -> sandbox.files().write("/root/note", "x")).isInstanceOf(QuotaExceededException.class);
            // ... but the sandbox is fine: its files can be listed and deleted, which makes room at once.
            assertThat(sandbox.files().list("/root")).extracting(f -> f.name()).contains("big");
            sandbox.files().delete("/root/big");
            var after = sandbox.exec("sh", "-c", "cat /dev/shm/status /dev/shm/err && dd if=/dev/zero of=/root/small bs=1M count=16 2>/dev/null && echo ok");
            assertThat(after.stdout()).as(after.stderr()).startsWith("1\n").contains("Disk quota exceeded").endsWith("ok\n");
            assertThat(sandboxes.get(sandbox.id()).state()).isEqualTo("running");
            var parentDisk = sandboxes.metrics(sandbox.id());
            assertThat(parentDisk.diskLimitBytes()).isEqualTo(64L << 20);
            assertThat(parentDisk.diskBytes()).isBetween(16L << 20, 64L << 20);
            assertThat(parentDisk.diskInheritedBytes()).isZero();

            // A fork has the same disk size, for what it writes itself: the 16 MiB it inherited
            // (/root/small) are its parent's.
            var checkpoint = sandbox.checkpoint("disk", false);
            var fork = sandbox.fork(ForkRequest.builder().checkpoint(checkpoint.id()).build()).getFirst();
            ids.add(fork.id());
            assertThat(fork.resources().diskMb()).isEqualTo(64);
            fork.exec("sh", "-c", "dd if=/dev/zero of=/root/more bs=1M count=100 2>/dev/shm/err; echo $? >/dev/shm/status");
            // Full: deleting what it inherited frees nothing...
            fork.files().delete("/root/small");
            assertThatThrownBy(() -> fork.exec("true")).isInstanceOf(QuotaExceededException.class);
            // ... it had written more than 64 - 16 MiB when it filled up, and deleting that makes room.
            assertThat(fork.files().list("/root")).filteredOn(f -> f.name().equals("more")).singleElement()
                    .satisfies(f -> assertThat(f.size()).isGreaterThan(56L << 20));
            fork.files().delete("/root/more");
            var forkFreed = fork.exec("sh", "-c", "cat /dev/shm/status /dev/shm/err");
            assertThat(forkFreed.stdout()).as(forkFreed.stderr()).startsWith("1\n").contains("Disk quota exceeded");
            assertThat(fork.exec("sh", "-c", "dd if=/dev/zero of=/root/more bs=1M count=40 2>/dev/null && echo ok").stdout()).isEqualTo("ok\n");

            // The parent deleted: what it wrote that the checkpoint and the fork still hold (its 16 MiB, which the
            // fork deleted but the checkpoint keeps) is the fork's to carry within its 64 a moment later, 40 of its own with it.
            String probe = "dd if=/dev/zero of=/root/probe bs=1M count=16 2>/dev/null; s=$?; rm -f /root/probe; echo $s";
            assertThat(fork.exec("sh", "-c", probe).stdout()).isEqualTo("0\n");
            sandboxes.delete(sandbox.id());
            ids.remove(sandbox.id());
            Await.until("the fork to carry its deleted parent's writes", Duration.ofSeconds(30),
                    () -> fork.exec("sh", "-c", probe).stdout().equals("1\n"));
            assertThat(sandboxes.get(fork.id()).state()).isEqualTo("running");
            var forkDisk = sandboxes.metrics(fork.id());
            assertThat(forkDisk.diskInheritedBytes()).as("the parent's 16 MiB").isGreaterThanOrEqualTo(16L << 20);
            assertThat(forkDisk.diskBytes()).isGreaterThanOrEqualTo((40L + 16) << 20);
        } finally {
            for (String id : ids) sandboxes.delete(id);
        }
    }

    @Test
    void diskSizesOutsideTheLimitsAreInvalidRequests() {
        var sandboxes = service.client.sandboxes();
        assertThatThrownBy(() -> sandboxes.create(CreateSandboxRequest.builder().template("tiny").diskMb(32).build()))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("resources.diskMb").hasMessageContaining("was 32");
        assertThatThrownBy(() -> sandboxes.create(CreateSandboxRequest.builder().template("tiny").diskMb(65537).build()))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("resources.diskMb: must be at most 65536");
        // At least the template's size + 16 MiB, asked on every host (the full-quota fallback counts
        // the template's files): base does not fit in 64 MiB.
        assertThatThrownBy(() -> sandboxes.create(CreateSandboxRequest.builder().template("base").diskMb(64).build()))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("resources.diskMb: must be at least")
                .hasMessageContaining("for template 'base'");
        assertThat(sandboxes.list(ListSandboxesRequest.builder().build()).items()).noneMatch(s -> s.resources().diskMb() == 32);
    }

    @Test
    void theBaseTemplateHasPythonCurlAndProcps() {
        var sandbox = service.client.sandboxes().create(CreateSandboxRequest.builder().template("base").build());
        try {
            assertThat(sandbox.exec("python3", "-c", "print(6 * 7)").stdout()).isEqualTo("42\n");
            var tools = sandbox.exec("sh", "-c", "curl --version >/dev/null && ps -e >/dev/null && ip -br link && ls /etc/ssl/certs | head -1");
            assertThat(tools.exitCode()).as(tools.stderr()).isZero();
            assertThat(tools.stdout()).contains("lo");
            assertThat(service.client.templates().list()).anySatisfy(t -> {
                assertThat(t.name()).isEqualTo("base");
                assertThat(t.status()).isEqualTo("ready");
            });
        } finally {
            sandbox.delete();
        }
    }

    @Test
    void aStreamingClientThatLeavesTakesItsCommandWithIt() throws Exception {
        var sandbox = service.client.sandboxes().create();
        try (var http = HttpClient.newHttpClient()) {
            var request = HttpRequest.newBuilder(URI.create(service.url + "/v1/sandboxes/" + sandbox.id() + "/exec"))
                    .header("Authorization", "Bearer " + service.rootKey).header("Accept", "text/event-stream")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"cmd\": [\"sh\", \"-c\", \"while true; do echo tick; sleep 0.05; done\"]}"))
                    .build();
            var response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            try (var body = response.body()) {
                assertThat(new String(body.readNBytes(20), StandardCharsets.UTF_8)).startsWith("event: stdout");
            }
            Await.until("the command to be killed", Duration.ofSeconds(20),
                    () -> sandbox.exec("sh", "-c", "ps -o args | grep -c '[w]hile true' || true").stdout().strip().equals("0"));
        } finally {
            sandbox.delete();
        }
    }

    @Test
    void namesAreUnique() {
        var sandboxes = service.client.sandboxes();
        var first = sandboxes.create(CreateSandboxRequest.builder().name("unique-name").build());
        try {
            assertThatThrownBy(() -> sandboxes.create(CreateSandboxRequest.builder().name("unique-name").build()))
                    .isInstanceOfSatisfying(ConflictException.class, e -> assertThat(e.code()).isEqualTo("name_taken"));
        } finally {
            first.delete();
        }
    }

    /**
     * runc: the sandbox sees its own limits in its cgroups. gVisor: its kernel's cgroups inside show
     * none; the host's hold the sentry and everything it runs (the pids limit counts host tasks, so
     * it is higher than asked: the sentry's threads and a stub per process), and its kernel gives
     * the sandbox the memory asked for.
     */
    @EachRuntime
    void resourceLimitsReachTheCgroups(String runtime) throws IOException {
        ServiceFixture.assumeRuntime(runtime);
        var sandbox = service.client.sandboxes().create(CreateSandboxRequest.builder().runtime(runtime).cpus(0.5).memoryMb(96).pids(77).build());
        try {
            if (runtime.equals("gvisor")) {
                String cgroups = "/sys/fs/cgroup/%s/stasis/" + sandbox.id() + "/%s";
                assertThat(Files.readString(Path.of(cgroups.formatted("memory", "memory.limit_in_bytes"))).strip()).isEqualTo(Long.toString(96L << 20));
                assertThat(Long.parseLong(Files.readString(Path.of(cgroups.formatted("pids", "pids.max"))).strip())).isGreaterThan(77);
                assertThat(Files.readString(Path.of(cgroups.formatted("cpu", "cpu.cfs_quota_us"))).strip()).isEqualTo("50000");
                assertThat(sandbox.exec("sh", "-c", "free -m | awk '/^Mem:/ {print $2}'").stdout().strip()).isEqualTo("96");
                return;
            }
            var limits = sandbox.exec("sh", "-c", "cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max "
                    + "/sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us").stdout().lines().toList();
            assertThat(limits).containsExactly(Long.toString(96L << 20), "77", "50000", "100000");
        } finally {
            sandbox.delete();
        }
    }

    @EachRuntime
    void execStreamsOutputAndReportsTimeouts(String runtime) {
        ServiceFixture.assumeRuntime(runtime);
        var sandbox = service.client.sandboxes().create(CreateSandboxRequest.builder().runtime(runtime).build());
        try {
            var out = new ByteArrayOutputStream();
            var err = new ByteArrayOutputStream();
            var result = sandbox.execStream(ExecRequest.builder("sh", "-c", "for i in 1 2 3; do echo line $i; sleep 0.1; done; echo oops >&2; exit 4").build(),
                    ExecOutputListener.writingTo(out, err));
            assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo("line 1\nline 2\nline 3\n");
            assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("oops\n");
            assertThat(result.exitCode()).isEqualTo(4);

            var slow = sandbox.exec(ExecRequest.builder("sh", "-c", "sleep 1000 & sleep 1000").timeout(Duration.ofMillis(500)).build());
            assertThat(slow.timedOut()).isTrue();
            assertThat(slow.signal()).isEqualTo("KILL");
            assertThat(sandbox.exec("sh", "-c", "ps -o comm | grep -c sleep || true").stdout().strip()).isEqualTo("0");

            var stdin = sandbox.exec(ExecRequest.builder("wc", "-c").stdin(new byte[]{0, 1, 2, (byte) 0xff}).build());
            assertThat(stdin.stdout().strip()).isEqualTo("4");
            var binary = sandbox.exec(ExecRequest.builder("sh", "-c", "printf '\\377\\000a'").base64Output(true).build());
            assertThat(binary.stdoutBytes()).containsExactly(0xff, 0, 'a');
        } finally {
            sandbox.delete();
        }
    }

    @EachRuntime
    void filesRoundTripLargeAndSmall(String runtime) {
        ServiceFixture.assumeRuntime(runtime);
        var sandbox = service.client.sandboxes().create(CreateSandboxRequest.builder().runtime(runtime).build());
        try {
            var files = sandbox.files();
            byte[] big = new byte[5 << 20];
            new Random(7).nextBytes(big);
            files.write("/root/data/big.bin", big);
            assertThat(files.read("/root/data/big.bin")).isEqualTo(big);
            assertThat(sandbox.exec("sh", "-c", "wc -c < /root/data/big.bin; ls -ln /root/data/big.bin").stdout())
                    .startsWith(Integer.toString(big.length)).contains(" 0 ");
            files.write("/root/hello.txt", "hello", "0600");
            assertThat(files.stat("/root/hello.txt").mode()).isEqualTo("0600");
            files.mkdir("/root/dir/sub");
            files.move("/root/hello.txt", "/root/dir/sub/moved.txt");
            assertThat(files.list("/root/dir/sub")).extracting(f -> f.name()).containsExactly("moved.txt");
            assertThat(sandbox.exec("cat", "/root/dir/sub/moved.txt").stdout()).isEqualTo("hello");
            files.delete("/root/dir", true);
            assertThat(files.exists("/root/dir")).isFalse();
        } finally {
            sandbox.delete();
        }
    }

    @EachRuntime
    void fileAccessFollowsSymlinksOnlyInsideTheSandbox(String runtime) {
        ServiceFixture.assumeRuntime(runtime);
        var sandbox = service.client.sandboxes().create(CreateSandboxRequest.builder().runtime(runtime).build());
        try {
            sandbox.exec("sh", "-c", "echo sandbox-passwd > /root/passwd; ln -s /etc/passwd /root/abs; ln -s ../../../../../../etc/shadow /root/rel; "
                    + "ln -s / /root/up; mkdir -p /etc && echo 'root:x:0:0:sandbox:/root:/bin/sh' > /etc/passwd");
            var files = sandbox.files();
            assertThat(new String(files.read("/root/abs"), StandardCharsets.UTF_8)).contains("sandbox").doesNotContain("daemon:");
            assertThat(new String(files.read("/../../../../etc/passwd"), StandardCharsets.UTF_8)).contains("sandbox");
            assertThatThrownBy(() -> files.read("/root/rel")).isInstanceOf(NotFoundException.class);
            files.write("/root/up/../../../../tmp/escape-attempt", "x");
            assertThat(sandbox.exec("cat", "/tmp/escape-attempt").stdout()).isEqualTo("x");
            assertThat(Files.exists(Path.of("/tmp/escape-attempt"))).isFalse();
        } finally {
            sandbox.delete();
        }
    }

    @Test
    void twentySandboxesComeAndGoWithoutLeaks() throws Exception {
        var ids = new ArrayList<String>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            var futures = new ArrayList<Future<String>>();
            for (int i = 0; i < 20; i++) futures.add(executor.submit(() -> service.client.sandboxes().create().id()));
            for (var f : futures) ids.add(f.get());
        }
        var sandboxIds = new HashSet<SandboxId>();
        ids.forEach(id -> sandboxIds.add(new SandboxId(id)));
        for (String id : ids) assertThat(service.client.sandboxes().get(id).exec("echo", id).stdout()).isEqualTo(id + "\n");
        assertThat(HostLeaks.processesOf(sandboxIds)).hasSizeGreaterThanOrEqualTo(20);
        for (String id : ids) service.client.sandboxes().delete(id);
        assertThat(HostLeaks.processesOf(sandboxIds)).isEmpty();
        assertThat(HostLeaks.cgroupsOf(sandboxIds)).isEmpty();
        assertThat(HostLeaks.mountsUnder(service.dataDir.resolve("btrfs").resolve("roots"))).isEmpty();
    }

    /**
     * Creates and deletes at once: a slot is handed out again only once the rules named after it are
     * gone (a delete that freed it first removed the rules of the sandbox that got it next).
     */
    @Test
    void aHundredLifecyclesTwentyAtATimeAllSucceed() throws Exception {
        var failures = Collections.synchronizedList(new ArrayList<String>());
        var slots = new Semaphore(20);
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < 100; i++) {
                slots.acquire();
                executor.submit(() -> {
                    try {
                        var sandbox = service.client.sandboxes().create();
                        try {
                            assertThat(sandbox.exec("echo", "ok").stdout()).isEqualTo("ok\n");
                        } finally {
                            sandbox.delete();
                        }
                    } catch (RuntimeException | AssertionError e) {
                        failures.add(e.toString());
                    } finally {
                        slots.release();
                    }
                });
            }
        }
        assertThat(failures).isEmpty();
        assertThat(service.client.sandboxes().list().items()).isEmpty();
    }
}
