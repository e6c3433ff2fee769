package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.blob.s3.S3ProxyServer;
import io.stasis.testkit.Await;
import io.stasis.testkit.CounterLoop;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Durable checkpoints end to end: two instances on this machine share a blob store (a directory,
 * or a bucket of an in-process S3 server); the first takes checkpoints and is then stopped with its
 * data directory deleted entirely; the second has never seen them and restores them, files,
 * memory and processes included.
 */
@Tag("root")
class DurableCheckpointsIT {
    private static final Logger log = LoggerFactory.getLogger(DurableCheckpointsIT.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String COUNTER = CounterLoop.SCRIPT;
    private static final String CALM = "{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}";

    @EachRuntime
    void restoresOnAnotherInstanceFromALocalBlobDirectory(String runtime) throws Exception {
        ServiceFixture.assumeRuntime(runtime);
        Path blobs = Files.createTempDirectory("stasis-durable-blobs");
        try {
            roundTrip(List.of("--blob-dir", blobs.toString()), blobs, runtime);
        } finally {
            ServiceFixture.deleteTree(blobs);
        }
    }

    @Test
    void restoresOnAnotherInstanceFromS3() throws Exception {
        try (var s3 = new S3ProxyServer(); var store = new S3StoreFlags(s3)) {
            roundTrip(store.flags, null, "runc");
        }
    }

    /** Checkpoints on a first instance, which then goes with its whole data dir; restores on a second. */
    private void roundTrip(List<String> storeFlags, Path blobDir, String runtime) throws Exception {
        String memoryCheckpoint, filesCheckpoint;
        long countBefore;
        try (var first = ServiceFixture.start(storeFlags.toArray(String[]::new)); var api = new RawApi(first.url, first.rootKey)) {
            String id = api.post("/v1/sandboxes", ServiceFixture.inRuntime(runtime, CALM)).get("id").asText();
            api.sh(id, "echo one > /root/state; head -c 3000000 /dev/urandom > /root/blob");
            // A files-only checkpoint, uploaded in the background, then waited for.
            var files = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"name\": \"files\", \"memory\": false}");
            filesCheckpoint = files.get("id").asText();
            var synced = api.post("/v1/checkpoints/" + filesCheckpoint + "/sync?timeout=2m", null);
            assertThat(synced.get("durable").asBoolean()).isTrue();
            assertThat(synced.get("upload").asText()).isEqualTo("durable");
            assertThat(synced.get("logicalBytes").asLong()).isGreaterThan(3_000_000);
            assertThat(synced.get("storedBytes").asLong()).isPositive();

            api.sh(id, "echo two > /root/state");
            api.sh(id, COUNTER);
            Await.until("counting", Duration.ofSeconds(10), () -> count(api, id) > 3);
            countBefore = count(api, id);
            long start = System.nanoTime();
            var made = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"name\": \"live\", \"memory\": true, \"durable\": true}");
            long uploadMs = (System.nanoTime() - start) / 1_000_000;
            memoryCheckpoint = made.get("id").asText();
            assertThat(made.get("durable").asBoolean()).as("durable before the call returns").isTrue();
            log.atInfo().addKeyValue("ms", uploadMs).addKeyValue("logicalBytes", made.get("logicalBytes").asLong())
                    .addKeyValue("storedBytes", made.get("storedBytes").asLong()).log("durable memory checkpoint taken");
            // Incremental: the second root stream holds only what changed (the 3 MB file is not sent again).
            assertThat(made.get("storedBytes").asLong()).as("dedup and incremental send").isLessThan(synced.get("storedBytes").asLong());
            if (blobDir != null) {
                JsonNode descriptor = JSON.readTree(Files.readString(blobDir.resolve("checkpoints/" + memoryCheckpoint + ".json")));
                assertThat(descriptor.get("roots")).hasSize(2);
                assertThat(descriptor.get("roots").get(1).get("parentId").asText()).isEqualTo(filesCheckpoint);
                assertThat(descriptor.get("sandbox").get("lifecycle").get("pauseAfterIdle").isNull()).isTrue();
                // The sandbox names its newest durable checkpoint and the SHA-256 of the descriptor the store holds.
                var image = api.get("/v1/sandboxes/" + id).get("durableImage");
                assertThat(image.get("checkpointId").asText()).isEqualTo(memoryCheckpoint);
                byte[] stored = Files.readAllBytes(blobDir.resolve("checkpoints/" + memoryCheckpoint + ".json"));
                assertThat(image.get("digest").asText()).isEqualTo("sha256:" + HexFormat.of().formatHex(
                        MessageDigest.getInstance("SHA-256").digest(stored)));
                assertThat(api.post("/v1/sandboxes/" + id + "/resume", null).get("durableImage").get("checkpointId").asText())
                        .as("a resume answers it too").isEqualTo(memoryCheckpoint);
                assertThat(api.get("/v1/sandboxes").get("items").get(0).has("durableImage")).as("not in lists").isFalse();
            }
            var listed = api.get("/v1/checkpoints").get("items");
            var ids = new ArrayList<String>();
            listed.forEach(c -> {
                ids.add(c.get("id").asText());
                assertThat(c.get("durable").asBoolean()).isTrue();
            });
            assertThat(ids).containsExactly(filesCheckpoint, memoryCheckpoint);
        }
        // The first instance is gone, its data directory too (ServiceFixture.close deletes it).
        try (var second = ServiceFixture.start(storeFlags.toArray(String[]::new)); var api = new RawApi(second.url, second.rootKey)) {
            assertThat(api.get("/v1/checkpoints").get("items")).as("none taken here").isEmpty();
            var stored = new ArrayList<String>();
            api.get("/v1/checkpoints?source=store").get("items").forEach(c -> {
                stored.add(c.get("id").asText());
                assertThat(c.get("durable").asBoolean()).isTrue();
            });
            assertThat(stored).as("what the blob store holds for this tenant").containsExactly(filesCheckpoint, memoryCheckpoint);
            long start = System.nanoTime();
            var restored = api.call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"" + memoryCheckpoint + "\", \"name\": \"back\"}");
            long restoreMs = (System.nanoTime() - start) / 1_000_000;
            assertThat(restored.status()).as(restored.body().toString()).isEqualTo(201);
            log.atInfo().addKeyValue("ms", restoreMs).log("restored a memory checkpoint on a fresh instance");
            String id = restored.body().get("id").asText();
            assertThat(restored.body().get("checkpointId").asText()).isEqualTo(memoryCheckpoint);
            assertThat(restored.body().get("lifecycle").get("pauseAfterIdle").isNull()).as("settings from the descriptor").isTrue();
            assertThat(restored.body().get("runtime").asText()).as("the runtime from the descriptor").isEqualTo(runtime);
            assertThat(api.sh(id, "cat /root/state")).isEqualTo("two\n");
            long resumedAt = count(api, id);
            assertThat(resumedAt).as("the counter's memory came back").isGreaterThanOrEqualTo(countBefore);
            Await.until("counting on", Duration.ofSeconds(10), () -> count(api, id) > resumedAt);

            var fromFiles = api.post("/v1/sandboxes", "{\"fromCheckpoint\": \"" + filesCheckpoint + "\"}");
            String filesId = fromFiles.get("id").asText();
            assertThat(api.sh(filesId, "cat /root/state; wc -c < /root/blob")).isEqualTo("one\n3000000\n");
            assertThat(fromFiles.get("runtime").asText()).isEqualTo(runtime);
            assertThat(api.sh(filesId, "test -e /tmp/count && echo yes || echo no")).as("files only: no processes").isEqualTo("no\n");

            // Another tenant does not see it.
            var tenant = api.post("/v1/tenants", "{\"name\": \"other\"}");
            var key = api.post("/v1/tenants/" + tenant.get("id").asText() + "/keys", "{}").get("secret").asText();
            try (var other = new RawApi(second.url, key)) {
                var refused = other.call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"" + memoryCheckpoint + "\"}");
                assertThat(refused.status()).isEqualTo(404);
                assertThat(refused.errorCode()).isEqualTo("checkpoint_not_found");
            }
            assertThat(api.call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"ckpt_doesnotexist0000\"}").errorCode())
                    .isEqualTo("checkpoint_not_found");
        }
    }

    @EachRuntime
    void aDurableHibernationSurvivesTheLossOfTheDataDirectory(String runtime) throws Exception {
        ServiceFixture.assumeRuntime(runtime);
        Path blobs = Files.createTempDirectory("stasis-durable-blobs");
        try {
            String checkpoint;
            long countBefore;
            try (var first = ServiceFixture.start("--blob-dir", blobs.toString(), "--hibernate-durable");
                 var api = new RawApi(first.url, first.rootKey)) {
                String id = api.post("/v1/sandboxes", ServiceFixture.inRuntime(runtime, CALM)).get("id").asText();
                api.sh(id, "echo asleep > /root/state");
                api.sh(id, COUNTER);
                Await.until("counting", Duration.ofSeconds(10), () -> count(api, id) > 3);
                countBefore = count(api, id);
                long start = System.nanoTime();
                var hibernated = api.post("/v1/sandboxes/" + id + "/hibernate", null);
                log.atInfo().addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("durable hibernation");
                checkpoint = hibernated.get("hibernation").get("checkpointId").asText();
                var state = api.get("/v1/checkpoints/" + checkpoint);
                assertThat(state.get("durable").asBoolean()).as("uploaded before hibernate returned").isTrue();
                assertThat(state.get("purpose").asText()).isEqualTo("hibernation");
            }
            try (var second = ServiceFixture.start("--blob-dir", blobs.toString()); var api = new RawApi(second.url, second.rootKey)) {
                var restored = api.call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"" + checkpoint + "\"}");
                assertThat(restored.status()).as(restored.body().toString()).isEqualTo(201);
                String id = restored.body().get("id").asText();
                assertThat(restored.body().get("runtime").asText()).isEqualTo(runtime);
                assertThat(api.sh(id, "cat /root/state")).isEqualTo("asleep\n");
                long resumedAt = count(api, id);
                assertThat(resumedAt).isGreaterThanOrEqualTo(countBefore);
                Await.until("counting on", Duration.ofSeconds(10), () -> count(api, id) > resumedAt);
            }
        } finally {
            ServiceFixture.deleteTree(blobs);
        }
    }

    /** The dedup target: after 1% of a 200 MB root changed, the second checkpoint stores at most 3% of the first. */
    @Test
    void aCheckpointAfterASmallChangeStoresLittleAndRestoresElsewhere() throws Exception {
        Path blobs = Files.createTempDirectory("stasis-durable-blobs");
        try {
            String second;
            try (var first = ServiceFixture.start("--blob-dir", blobs.toString()); var api = new RawApi(first.url, first.rootKey)) {
                String id = api.post("/v1/sandboxes", CALM.replace("}}", "}, \"resources\": {\"diskMb\": 1024}}")).get("id").asText();
                api.sh(id, "head -c 209715200 /dev/urandom > /root/big");
                long start = System.nanoTime();
                var full = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": false, \"durable\": true}");
                long fullMs = (System.nanoTime() - start) / 1_000_000;
                // 2 MiB (1%) rewritten in place, in the middle of the file.
                api.sh(id, "head -c 2097152 /dev/urandom | dd of=/root/big bs=1M seek=100 conv=notrunc 2>/dev/null");
                start = System.nanoTime();
                var next = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": false, \"durable\": true}");
                long nextMs = (System.nanoTime() - start) / 1_000_000;
                second = next.get("id").asText();
                long fullStored = full.get("storedBytes").asLong();
                long nextStored = next.get("storedBytes").asLong();
                log.atInfo().addKeyValue("fullMs", fullMs).addKeyValue("fullLogical", full.get("logicalBytes").asLong())
                        .addKeyValue("fullStored", fullStored).addKeyValue("nextMs", nextMs)
                        .addKeyValue("nextLogical", next.get("logicalBytes").asLong()).addKeyValue("nextStored", nextStored)
                        .log("200 MB root, then 1% changed");
                assertThat(fullStored).isGreaterThan(200L << 20);
                assertThat(nextStored).as("the second checkpoint stores at most 3% of the first").isLessThanOrEqualTo(fullStored * 3 / 100);
            }
            try (var other = ServiceFixture.start("--blob-dir", blobs.toString()); var api = new RawApi(other.url, other.rootKey)) {
                long start = System.nanoTime();
                String id = api.post("/v1/sandboxes", "{\"fromCheckpoint\": \"" + second + "\"}").get("id").asText();
                log.atInfo().addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("restored a 200 MB root on a fresh instance");
                assertThat(api.sh(id, "wc -c < /root/big")).isEqualTo("209715200\n");
            }
        } finally {
            ServiceFixture.deleteTree(blobs);
        }
    }

    /** A host's --max-disk-mb holds for a sandbox made from another host's checkpoint too, not only for a create. */
    @Test
    void aHostRefusesACheckpointWhoseDiskIsAboveItsMax() throws Exception {
        Path blobs = Files.createTempDirectory("stasis-durable-blobs");
        try {
            String checkpoint;
            try (var first = ServiceFixture.start("--blob-dir", blobs.toString()); var api = new RawApi(first.url, first.rootKey)) {
                String id = api.post("/v1/sandboxes", CALM.replace("}}", "}, \"resources\": {\"diskMb\": 1024}}")).get("id").asText();
                checkpoint = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": false, \"durable\": true}").get("id").asText();
            }
            try (var small = ServiceFixture.start("--blob-dir", blobs.toString(), "--max-disk-mb", "512", "--default-disk-mb", "512");
                 var api = new RawApi(small.url, small.rootKey)) {
                var refused = api.call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"" + checkpoint + "\"}");
                assertThat(refused.status()).isEqualTo(422);
                assertThat(refused.body().path("error").path("message").asText()).contains("--max-disk-mb", "512", "1024");
                var created = api.call("POST", "/v1/sandboxes", "{\"resources\": {\"diskMb\": 1024}}");
                assertThat(created.status()).isEqualTo(422);
                assertThat(created.body().path("error").path("message").asText()).contains("resources.diskMb", "--max-disk-mb");
                assertThat(api.get("/v1/sandboxes").get("items")).isEmpty();
            }
        } finally {
            ServiceFixture.deleteTree(blobs);
        }
    }

    /** With --checkpoint-uploads on-request, a checkpoint stays local until it asks to be durable or is synced. */
    @Test
    void onRequestUploadsOnlyWhatIsAskedFor() throws Exception {
        Path blobs = Files.createTempDirectory("stasis-durable-on-request");
        try (var service = ServiceFixture.start("--blob-dir", blobs.toString(), "--checkpoint-uploads", "on-request");
             var api = new RawApi(service.url, service.rootKey)) {
            String id = api.post("/v1/sandboxes", CALM).get("id").asText();
            api.sh(id, "echo local > /root/state");
            String local = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": false}").get("id").asText();
            String asked = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": false, \"durable\": true}").get("id").asText();
            assertThat(api.get("/v1/checkpoints/" + asked).get("durable").asBoolean()).isTrue();
            // A background upload is recorded as pending before the checkpoint call returns: none was.
            var kept = api.get("/v1/checkpoints/" + local);
            assertThat(kept.get("durable").asBoolean()).isFalse();
            assertThat(kept.get("upload").asText()).isEqualTo("none");
            assertThat(Files.exists(blobs.resolve("checkpoints").resolve(local + ".json"))).isFalse();
            var synced = api.post("/v1/checkpoints/" + local + "/sync", null);
            assertThat(synced.get("durable").asBoolean()).isTrue();
            assertThat(Files.exists(blobs.resolve("checkpoints").resolve(local + ".json"))).isTrue();
            api.call("DELETE", "/v1/sandboxes/" + id, null);
        } finally {
            ServiceFixture.deleteTree(blobs);
        }
    }

    /** A process holding 256 MB of random memory comes back on a fresh instance with the same bytes. */
    @Test
    void aLargeMemoryImageRestoresOnAFreshInstance() throws Exception {
        Path blobs = Files.createTempDirectory("stasis-durable-blobs");
        String program = "import os, time\nb = bytearray(os.urandom(256 << 20))\nn = 0\nwhile True:\n"
                + "    n += 1\n    open('/tmp/sum.new', 'w').write(str(hash(bytes(b[::4096]))) + ' ' + str(n))\n"
                + "    os.rename('/tmp/sum.new', '/tmp/sum')\n    time.sleep(0.2)\n";
        try {
            String checkpoint, sum;
            try (var first = ServiceFixture.start("--blob-dir", blobs.toString()); var api = new RawApi(first.url, first.rootKey)) {
                String id = api.post("/v1/sandboxes", "{\"template\": \"base\", \"resources\": {\"memoryMb\": 1024}, "
                        + "\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}").get("id").asText();
                api.sh(id, "cat > /root/hold.py <<'EOF'\n" + program + "EOF\n(python3 /root/hold.py) >/dev/null 2>&1 &");
                Await.until("the memory is held", Duration.ofSeconds(60), () -> api.sh(id, "cat /tmp/sum 2>/dev/null; true").contains(" "));
                sum = api.sh(id, "cat /tmp/sum").split(" ")[0];
                long start = System.nanoTime();
                var made = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": true, \"durable\": true}");
                log.atInfo().addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).addKeyValue("imageBytes", made.get("sizeBytes").asLong())
                        .addKeyValue("logicalBytes", made.get("logicalBytes").asLong()).addKeyValue("storedBytes", made.get("storedBytes").asLong())
                        .log("durable checkpoint of a 256 MB process");
                checkpoint = made.get("id").asText();
                assertThat(made.get("sizeBytes").asLong()).isGreaterThan(256L << 20);
            }
            try (var second = ServiceFixture.start("--blob-dir", blobs.toString()); var api = new RawApi(second.url, second.rootKey)) {
                long start = System.nanoTime();
                String id = api.post("/v1/sandboxes", "{\"fromCheckpoint\": \"" + checkpoint + "\"}").get("id").asText();
                log.atInfo().addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("restored a 256 MB process on a fresh instance");
                String before = api.sh(id, "cat /tmp/sum");
                Await.until("the restored process runs on", Duration.ofSeconds(20), () -> !api.sh(id, "cat /tmp/sum").equals(before));
                assertThat(api.sh(id, "cat /tmp/sum").split(" ")[0]).as("the same bytes in memory").isEqualTo(sum);
            }
        } finally {
            ServiceFixture.deleteTree(blobs);
        }
    }

    /** A send in flight does not stop its sandbox from being deleted: the delete aborts it. */
    @Test
    void deletingASandboxAbortsTheUploadOfItsCheckpoint() throws Exception {
        Path blobs = Files.createTempDirectory("stasis-durable-blobs");
        try (var service = ServiceFixture.start("--blob-dir", blobs.toString()); var api = new RawApi(service.url, service.rootKey)) {
            String id = api.post("/v1/sandboxes", CALM).get("id").asText();
            api.sh(id, "head -c 314572800 /dev/urandom > /root/big");
            String checkpoint = api.post("/v1/sandboxes/" + id + "/checkpoints", "{\"memory\": false}").get("id").asText();
            assertThat(api.get("/v1/checkpoints/" + checkpoint).get("upload").asText()).isEqualTo("pending");
            assertThat(api.call("DELETE", "/v1/sandboxes/" + id, null).status()).isEqualTo(204);
            assertThat(api.call("GET", "/v1/checkpoints/" + checkpoint, null).status()).isEqualTo(404);
        } finally {
            ServiceFixture.deleteTree(blobs);
        }
    }

    /** The counter's value; -1 before its first write or when caught between the shell's truncate and write. */
    private static long count(RawApi api, String id) {
        String text = api.sh(id, "cat /tmp/count 2>/dev/null; true").strip();
        return text.isEmpty() ? -1 : Long.parseLong(text);
    }
}
