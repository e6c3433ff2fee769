package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.host.ToolRunner;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ForkRequest;
import io.stasis.sdk.ListSandboxesRequest;
import io.stasis.sdk.RetryPolicy;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisApiException;
import io.stasis.sdk.StasisClient;
import io.stasis.testkit.Await;
import io.stasis.testkit.CounterLoop;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The host's btrfs pool full (ENOSPC: not a sandbox's own limit, which {@code SandboxApiIT} fills).
 * Every operation either works or answers a clear 4xx or 503 naming the full pool, never a 500;
 * every sandbox stays in the state it had or the one asked for, keeps what it had acknowledged,
 * and its processes go on; once there is room, every operation works again. The pool is small
 * (512 MiB) and filled from the host, as other sandboxes, checkpoints and volumes would fill it.
 */
@Tag("root")
class PoolFullIT {

    @Test
    void aFullPoolRefusesClearlyLosesNothingAndRecoversOnceThereIsRoom() throws Exception {
        try (var service = ServiceFixture.start("--pool-size", "512M", "--warm-pool", "0");
             var client = StasisClient.builder().url(service.url).apiKey(service.rootKey).retryPolicy(RetryPolicy.none()).build()) {
            var sandboxes = client.sandboxes();
            var ids = new ArrayList<String>();
            var running = sandboxes.create(CreateSandboxRequest.builder().template("tiny").build());
            var sleeper = sandboxes.create(CreateSandboxRequest.builder().template("tiny").build());
            var stopped = sandboxes.create(CreateSandboxRequest.builder().template("tiny").build());
            ids.addAll(List.of(running.id(), sleeper.id(), stopped.id()));
            for (var sandbox : List.of(running, sleeper)) {
                sandbox.exec("sh", "-c", CounterLoop.SCRIPT.replace("/tmp/", "/dev/shm/"));
                sandbox.files().write("/root/kept", "acknowledged");
            }
            stopped.stop();

            Path filler = service.dataDir.resolve("btrfs").resolve("filler");
            fill(filler);
            var outcomes = new LinkedHashMap<String, Outcome>();
            attempt(outcomes, "write a file", () -> running.files().write("/root/new", "x"));
            attempt(outcomes, "exec", () -> running.exec("true"));
            attempt(outcomes, "checkpoint with memory", () -> running.checkpoint("full-memory", true));
            attempt(outcomes, "checkpoint of files", () -> running.checkpoint("full-files", false));
            attempt(outcomes, "fork", () -> ids.addAll(running.fork(ForkRequest.builder().build()).stream().map(Sandbox::id).toList()));
            attempt(outcomes, "create", () -> ids.add(sandboxes.create(CreateSandboxRequest.builder().template("tiny").build()).id()));
            attempt(outcomes, "pause", running::pause);
            attempt(outcomes, "resume from pause", running::resume);
            attempt(outcomes, "hibernate", sleeper::hibernate);
            attempt(outcomes, "resume from hibernation", sleeper::resume);
            attempt(outcomes, "start", stopped::start);
            attempt(outcomes, "create a volume", () -> client.volumes().create("full", 64));
            System.out.println("a full pool: " + outcomes);
            assertThat(outcomes).as("nothing answers 500 on a full pool").allSatisfy((name, outcome) -> assertThat(outcome.status()).isNotEqualTo(500));
            assertThat(outcomes.get("resume from hibernation").code()).as("the full pool is named").isEqualTo("host_busy");
            assertThat(sandboxes.get(running.id()).state()).isEqualTo("running");
            assertThat(sandboxes.get(sleeper.id()).state()).isEqualTo(outcomes.get("resume from hibernation").ok() ? "running" : "hibernated");
            assertThat(sandboxes.get(stopped.id()).state()).isEqualTo(outcomes.get("start").ok() ? "running" : "stopped");
            assertThat(sandboxes.list(ListSandboxesRequest.builder().build()).items())
                    .extracting(s -> s.id()).containsExactlyInAnyOrderElementsOf(ids);

            Files.delete(filler);
            // btrfs gives the room back when it commits: the next operations see it within seconds.
            Await.until("room in the pool", Duration.ofSeconds(30), () -> {
                try {
                    sleeper.resume();
                    return true;
                } catch (StasisApiException e) {
                    if (e.status() != 503) throw e;
                    return false;
                }
            });
            assertThat(stopped.start().state()).isEqualTo("running");
            for (var sandbox : List.of(running, sleeper)) {
                assertThat(new String(sandbox.files().read("/root/kept"))).isEqualTo("acknowledged");
                long count = Long.parseLong(sandbox.exec("cat", "/dev/shm/count").stdout().strip());
                Await.until("the counter of " + sandbox.id() + " to go on", Duration.ofSeconds(10),
                        () -> Long.parseLong(sandbox.exec("cat", "/dev/shm/count").stdout().strip()) > count);
            }
            var fork = running.fork(ForkRequest.builder().build()).getFirst();
            ids.add(fork.id());
            assertThat(fork.exec("cat", "/root/kept").stdout()).isEqualTo("acknowledged");
            assertThat(sleeper.hibernate().state()).isEqualTo("hibernated");
            assertThat(sleeper.resume().state()).isEqualTo("running");
            for (String id : ids) sandboxes.delete(id);
        }
    }

    /**
     * The disk under the data directory full, where CRIU writes hibernation and checkpoint images
     * (here a 1 MiB tmpfs over the image directory): a hibernate or a memory checkpoint answers 503
     * naming the full disk, the sandbox runs on untouched, and both work once there is room.
     */
    @Test
    void aFullImageDiskRefusesHibernateAndMemoryCheckpointsAndTheSandboxRunsOn() throws Exception {
        try (var service = ServiceFixture.start("--warm-pool", "0");
             var client = StasisClient.builder().url(service.url).apiKey(service.rootKey).retryPolicy(RetryPolicy.none()).build()) {
            var sandbox = client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
            try {
                // Big enough that its image cannot fit: 4 MiB of random bytes held in memory.
                sandbox.exec("sh", "-c", "head -c 4194304 /dev/urandom > /dev/shm/held; " + CounterLoop.SCRIPT.replace("/tmp/", "/dev/shm/"));
                Path images = service.dataDir.resolve("runtime/images");
                Files.createDirectories(images);
                assertThat(ToolRunner.run(List.of("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", images.toString()),
                        Duration.ofSeconds(30)).exitCode()).isZero();
                try {
                    for (Supplier<Object> call : List.<Supplier<Object>>of(sandbox::hibernate, () -> sandbox.checkpoint("full", true))) {
                        try {
                            call.get();
                            throw new AssertionError("a dump into a full disk succeeded");
                        } catch (StasisApiException e) {
                            assertThat(e.status()).as(e.getMessage()).isEqualTo(503);
                            assertThat(e.getMessage()).contains("disk").contains("full");
                        }
                        assertThat(client.sandboxes().get(sandbox.id()).state()).isEqualTo("running");
                        long count = Long.parseLong(sandbox.exec("cat", "/dev/shm/count").stdout().strip());
                        Await.until("the counter to go on", Duration.ofSeconds(10),
                                () -> Long.parseLong(sandbox.exec("cat", "/dev/shm/count").stdout().strip()) > count);
                    }
                } finally {
                    ToolRunner.run(List.of("umount", images.toString()), Duration.ofSeconds(30));
                }
                assertThat(sandbox.checkpoint("room", true).id()).isNotBlank();
                assertThat(sandbox.hibernate().state()).isEqualTo("hibernated");
                assertThat(sandbox.resume().state()).isEqualTo("running");
                assertThat(sandbox.exec("sh", "-c", "wc -c < /dev/shm/held").stdout().strip()).isEqualTo("4194304");
            } finally {
                client.sandboxes().delete(sandbox.id());
            }
        }
    }

    private record Outcome(int status, String code) {
        boolean ok() {
            return status == 200;
        }
    }

    private static void attempt(Map<String, Outcome> outcomes, String name, Supplier<Object> call) {
        try {
            call.get();
            outcomes.put(name, new Outcome(200, "ok"));
        } catch (StasisApiException e) {
            System.out.println(name + " on a full pool: " + e.getMessage());
            outcomes.put(name, new Outcome(e.status(), e.code()));
        }
    }

    /** Writes incompressible data until the pool refuses more. */
    private static void fill(Path file) throws IOException {
        byte[] block = new byte[1 << 20];
        new Random(1).nextBytes(block);
        try (OutputStream out = Files.newOutputStream(file)) {
            while (true) out.write(block);
        } catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left")) throw e;
        }
    }
}
