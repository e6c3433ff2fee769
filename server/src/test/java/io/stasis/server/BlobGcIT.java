package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.blob.s3.S3ProxyServer;
import io.stasis.core.blob.ManifestCodec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Garbage collection of the blob store through the API, end to end: it frees what no durable
 * checkpoint or volume sync needs any more, and everything still named restores on a fresh
 * instance; a service killed (SIGKILL) in the middle of a collection loses nothing, and its
 * restart clears its own lock and finishes the job; and a collection from one instance while
 * another uploads to the same store (S3) loses nothing.
 */
@Tag("root")
class BlobGcIT {
    private static final Logger log = LoggerFactory.getLogger(BlobGcIT.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CALM = "{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}";
    /** No grace period: only the locks and pins protect uploads, and the test's garbage is collectable at once. */
    private static final String[] GC_NOW = {"--blob-gc-grace", "0s", "--blob-gc-interval", "never"};

    @Test
    void freesWhatNothingNamesAndEverythingNamedStillRestores() throws Exception {
        Path blobs = Files.createTempDirectory("stasis-gc-blobs");
        String[] flags = flags(blobs);
        try {
            String files1, memory3, gone2, orphan4, vsync1, vsync2, vid;
            String sumA, sumB, sumC, sumV1, sumV2;
            Set<String> orphanChunks;
            try (var first = ServiceFixture.start(flags); var api = new RawApi(first.url, first.rootKey)) {
                String sbx = api.post("/v1/sandboxes", CALM).get("id").asText();
                sumA = api.sh(sbx, "head -c 3000000 /dev/urandom > /root/a; md5sum < /root/a");
                files1 = checkpoint(api, sbx, false);
                sumB = api.sh(sbx, "head -c 2000000 /dev/urandom > /root/b; md5sum < /root/b");
                gone2 = checkpoint(api, sbx, true); // incremental on files1; its memory image is its own
                sumC = api.sh(sbx, "head -c 2000000 /dev/urandom > /root/c; echo three > /root/state; md5sum < /root/c");
                memory3 = checkpoint(api, sbx, true); // chain files1, gone2, memory3
                assertThat(descriptor(blobs, memory3).get("roots")).hasSize(3);

                // A sandbox deleted here leaves its durable checkpoint in the store only.
                String other = api.post("/v1/sandboxes", CALM).get("id").asText();
                api.sh(other, "head -c 2000000 /dev/urandom > /root/orphan");
                orphan4 = checkpoint(api, other, false);
                assertThat(api.call("DELETE", "/v1/sandboxes/" + other, null).status()).isEqualTo(204);

                vid = api.post("/v1/volumes", "{\"name\": \"data\", \"sizeMb\": 64}").get("id").asText();
                String user = api.post("/v1/sandboxes", "{\"volumes\": [{\"volume\": \"data\", \"path\": \"/data\"}], \"lifecycle\": "
                        + "{\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}").get("id").asText();
                sumV1 = api.sh(user, "head -c 2000000 /dev/urandom > /data/v1; md5sum < /data/v1");
                vsync1 = api.post("/v1/volumes/data/sync", null).get("id").asText();
                sumV2 = api.sh(user, "head -c 2000000 /dev/urandom > /data/v2; md5sum < /data/v2");
                vsync2 = api.post("/v1/volumes/data/sync", null).get("id").asText();

                // Another tenant can neither see nor delete the store-only copy.
                var tenant = api.post("/v1/tenants", "{\"name\": \"mallory\"}");
                String secret = api.post("/v1/tenants/" + tenant.get("id").asText() + "/keys", "{}").get("secret").asText();
                try (var mallory = new RawApi(first.url, secret)) {
                    var refused = mallory.call("DELETE", "/v1/checkpoints/" + orphan4, null);
                    assertThat(refused.status()).isEqualTo(404);
                    assertThat(refused.errorCode()).isEqualTo("checkpoint_not_found");
                }
                assertThat(ids(api.get("/v1/checkpoints?source=store"))).contains(orphan4);

                var before = first.client.blobs().status(); // through the SDK, once
                assertThat(before.usage().chunks()).isPositive();
                var nothingYet = first.client.blobs().gc();
                assertThat(nothingYet.manifestsDeleted()).as("everything is named").isZero();
                assertThat(nothingYet.chunksDeleted()).isZero();

                // Delete a checkpoint in the middle of a chain, and the store-only copy.
                orphanChunks = chunksOf(blobs, descriptor(blobs, orphan4).get("roots").get(0).get("manifest").asText());
                assertThat(api.call("DELETE", "/v1/checkpoints/" + gone2, null).status()).isEqualTo(204);
                assertThat(api.call("DELETE", "/v1/checkpoints/" + orphan4, null).status()).isEqualTo(204);
                assertThat(ids(api.get("/v1/checkpoints?source=store"))).doesNotContain(orphan4, gone2).contains(files1, memory3);

                var report = api.post("/v1/blobs/gc", null);
                log.atInfo().addKeyValue("report", report).log("gc after deletes");
                // orphan4's root stream and gone2's memory image; gone2's root stream stays (memory3's chain names it).
                assertThat(report.get("manifestsDeleted").asInt()).isEqualTo(2);
                assertThat(report.get("chunksDeleted").asLong()).isPositive();
                assertThat(report.get("bytesFreed").asLong()).as("at least the orphan's 2 MB of random data").isGreaterThan(1_900_000);
                assertThat(report.get("liveMissing").asInt()).isZero();
                var after = api.get("/v1/blobs");
                assertThat(after.get("lastGc").get("chunksDeleted").asLong()).isEqualTo(report.get("chunksDeleted").asLong());
                assertThat(after.get("usage").get("chunks").asLong())
                        .isEqualTo(before.usage().chunks() - report.get("chunksDeleted").asLong());
                assertThat(after.get("locks")).as("no lock held once done").isEmpty();
            }
            // Every chunk a remaining stream lists is there; the orphan's own chunks are gone.
            var live = liveChunks(blobs);
            assertThat(live).allSatisfy(chunk -> assertThat(blobs.resolve(chunk)).exists());
            var freed = new HashSet<>(orphanChunks);
            freed.removeAll(live);
            assertThat(freed).isNotEmpty().allSatisfy(chunk -> assertThat(blobs.resolve(chunk)).doesNotExist());

            // A fresh instance restores what is still named, and nothing else.
            try (var fresh = ServiceFixture.start(flags); var api = new RawApi(fresh.url, fresh.rootKey)) {
                String r1 = restore(api, files1);
                assertThat(api.sh(r1, "md5sum < /root/a")).isEqualTo(sumA);
                assertThat(api.sh(r1, "test -e /root/b && echo yes || echo no")).isEqualTo("no\n");
                String r3 = restore(api, memory3);
                assertThat(api.sh(r3, "md5sum < /root/a; md5sum < /root/b; md5sum < /root/c; cat /root/state"))
                        .isEqualTo(sumA + sumB + sumC + "three\n");
                for (String deleted : List.of(gone2, orphan4)) {
                    var refused = api.call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"" + deleted + "\"}");
                    assertThat(refused.status()).as(deleted).isEqualTo(404);
                }
                api.post("/v1/volumes", "{\"name\": \"old\", \"fromSync\": \"" + vsync1 + "\"}");
                api.post("/v1/volumes", "{\"name\": \"new\", \"fromSync\": \"" + vid + "\"}");
                String user = api.post("/v1/sandboxes", "{\"volumes\": [{\"volume\": \"old\", \"path\": \"/old\"}, {\"volume\": \"new\", "
                        + "\"path\": \"/new\"}], \"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}").get("id").asText();
                assertThat(api.sh(user, "md5sum < /old/v1; test -e /old/v2 || echo none; md5sum < /new/v1; md5sum < /new/v2"))
                        .isEqualTo(sumV1 + "none\n" + sumV1 + sumV2);
                assertThat(vsync2).isNotEqualTo(vsync1);
            }
        } finally {
            ServiceFixture.deleteTree(blobs);
        }
    }

    /** A deleted volume sync leaves the store; what only it held is collected; the others still restore. */
    @Test
    void deletedVolumeSyncsAreCollectedAndTheRestStillRestore() throws Exception {
        Path blobs = Files.createTempDirectory("stasis-gc-vsync");
        try (var service = ServiceFixture.start(flags(blobs)); var api = new RawApi(service.url, service.rootKey)) {
            String vid = api.post("/v1/volumes", "{\"name\": \"synced\", \"sizeMb\": 64}").get("id").asText();
            String user = api.post("/v1/sandboxes", "{\"volumes\": [{\"volume\": \"synced\", \"path\": \"/data\"}], \"lifecycle\": "
                    + "{\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}").get("id").asText();
            var syncs = new ArrayList<String>();
            var sums = new ArrayList<String>();
            for (int i = 1; i <= 3; i++) {
                sums.add(api.sh(user, "head -c 2000000 /dev/urandom > /data/v" + i + "; md5sum < /data/v" + i));
                syncs.add(api.post("/v1/volumes/synced/sync", null).get("id").asText());
            }
            assertThat(api.post("/v1/blobs/gc", null).get("manifestsDeleted").asInt()).as("every sync named").isZero();

            // The oldest: later syncs name its stream too, so nothing is freed.
            assertThat(api.call("DELETE", "/v1/volumes/synced/syncs/" + syncs.get(0), null).status()).isEqualTo(204);
            assertThat(api.post("/v1/blobs/gc", null).get("manifestsDeleted").asInt()).isZero();
            // The newest: its own stream goes, and the volume's newest sync is the second again.
            assertThat(api.call("DELETE", "/v1/volumes/" + vid + "/syncs/" + syncs.get(2), null).status()).isEqualTo(204);
            var report = api.post("/v1/blobs/gc", null);
            assertThat(report.get("manifestsDeleted").asInt()).isEqualTo(1);
            assertThat(report.get("bytesFreed").asLong()).as("the third sync's 2 MB of random data").isGreaterThan(1_900_000);
            assertThat(ids(api.get("/v1/volumes/synced/syncs"))).containsExactly(syncs.get(1));

            var again = api.call("DELETE", "/v1/volumes/synced/syncs/" + syncs.get(2), null);
            assertThat(again.status()).isEqualTo(404);
            assertThat(again.errorCode()).isEqualTo("volume_sync_not_found");
            for (String deleted : List.of(syncs.get(0), syncs.get(2)))
                assertThat(api.call("POST", "/v1/volumes", "{\"name\": \"x\", \"fromSync\": \"" + deleted + "\"}").errorCode())
                        .isEqualTo("volume_sync_not_found");
            api.post("/v1/volumes", "{\"name\": \"by-id\", \"fromSync\": \"" + syncs.get(1) + "\"}");
            api.post("/v1/volumes", "{\"name\": \"by-volume\", \"fromSync\": \"" + vid + "\"}");
            String reader = api.post("/v1/sandboxes", "{\"volumes\": [{\"volume\": \"by-id\", \"path\": \"/a\"}, {\"volume\": \"by-volume\", "
                    + "\"path\": \"/b\"}], \"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}").get("id").asText();
            assertThat(api.sh(reader, "md5sum < /a/v1; md5sum < /a/v2; test -e /a/v3 || echo none; md5sum < /b/v2"))
                    .isEqualTo(sums.get(0) + sums.get(1) + "none\n" + sums.get(1));
            // The next sync after the newest went is a full one (its base snapshot went with it).
            assertThat(api.post("/v1/volumes/synced/sync", null).get("parentId").isNull()).isTrue();

            var tenant = api.post("/v1/tenants", "{\"name\": \"vsync-other\"}");
            String secret = api.post("/v1/tenants/" + tenant.get("id").asText() + "/keys", "{}").get("secret").asText();
            try (var other = new RawApi(service.url, secret)) {
                assertThat(other.call("DELETE", "/v1/volumes/" + vid + "/syncs/" + syncs.get(1), null).status()).isEqualTo(404);
            }
            assertThat(ids(api.get("/v1/volumes/synced/syncs"))).contains(syncs.get(1));
            for (String sandbox : List.of(user, reader)) api.call("DELETE", "/v1/sandboxes/" + sandbox, null);
            for (String volume : List.of("synced", "by-id", "by-volume")) api.call("DELETE", "/v1/volumes/" + volume, null);
        } finally {
            ServiceFixture.deleteTree(blobs);
        }
    }

    @Test
    void aServiceKilledDuringACollectionLosesNothingAndItsRestartFinishesIt() throws Exception {
        Path dataDir = Files.createTempDirectory("stasis-gc-crash");
        Path blobs = Files.createTempDirectory("stasis-gc-crash-blobs");
        Path log = Path.of("target", "blob-gc-it-service.log").toAbsolutePath();
        String sandbox = null;
        try {
            String kept, deleted, sum;
            try (var first = ServiceProcess.start(dataDir, log, Map.of("STASIS_FAULT_POINT", "gc.chunk-deleted"), flags(blobs));
                 var api = new RawApi(first.url, key(dataDir))) {
                sandbox = api.post("/v1/sandboxes", CALM).get("id").asText();
                sum = api.sh(sandbox, "head -c 1000000 /dev/urandom > /root/keep; md5sum < /root/keep");
                kept = checkpoint(api, sandbox, true);
                api.sh(sandbox, "head -c 4000000 /dev/urandom > /root/garbage");
                deleted = checkpoint(api, sandbox, false); // incremental on kept: only its own stream becomes garbage
                assertThat(api.call("DELETE", "/v1/checkpoints/" + deleted, null).status()).isEqualTo(204);
                try {
                    api.call("POST", "/v1/blobs/gc", null);
                } catch (UncheckedIOException expected) {
                    // the service died under the call
                }
                assertThat(first.awaitDeath(Duration.ofSeconds(60))).as("the service halted at its first chunk delete").isTrue();
            }
            assertThat(Files.list(blobs.resolve("locks")).toList()).as("the dead collection's lock is left behind").isNotEmpty();
            long chunksLeft = countChunks(blobs);
            try (var second = ServiceProcess.start(dataDir, log, Map.of(), flags(blobs)); var api = new RawApi(second.url, key(dataDir))) {
                // The restart removed its own dead lock: it collects at once, and finishes what the first run began.
                var report = api.post("/v1/blobs/gc", null);
                assertThat(report.get("chunksDeleted").asLong()).isPositive();
                assertThat(countChunks(blobs)).isEqualTo(chunksLeft - report.get("chunksDeleted").asLong());
                assertThat(api.post("/v1/blobs/gc", null).get("chunksDeleted").asLong()).as("nothing left to collect").isZero();
            }
            assertThat(liveChunks(blobs)).allSatisfy(chunk -> assertThat(blobs.resolve(chunk)).exists());
            try (var other = ServiceFixture.start(flags(blobs)); var api = new RawApi(other.url, other.rootKey)) {
                String restored = restore(api, kept);
                assertThat(api.sh(restored, "md5sum < /root/keep; test -e /root/garbage || echo gone")).isEqualTo(sum + "gone\n");
            }
        } finally {
            // The killed service left its sandbox running: a last start removes it.
            ServiceProcess.removeLeftovers(dataDir, log, sandbox, flags(blobs));
            ServiceFixture.deleteTree(blobs);
        }
    }

    @Test
    void collectionsFromOneInstanceWhileAnotherUploadsToTheSameBucketLoseNothing() throws Exception {
        try (var s3 = new S3ProxyServer(); var bucket = new S3StoreFlags(s3)) {
            var flags = new ArrayList<>(bucket.flags);
            flags.addAll(List.of(GC_NOW));
            String[] store = flags.toArray(String[]::new);
            try (var uploader = ServiceFixture.start(store); var up = new RawApi(uploader.url, uploader.rootKey);
                 var collector = ServiceFixture.start(store); var gc = new RawApi(collector.url, collector.rootKey);
                 var pool = Executors.newVirtualThreadPerTaskExecutor()) {
                String sbx = up.post("/v1/sandboxes", CALM).get("id").asText();
                String sum = up.sh(sbx, "head -c 48000000 /dev/urandom > /root/big; md5sum < /root/big");
                // Its chunks become garbage once this checkpoint is deleted; the next upload finds them stored and reuses them.
                String first = checkpoint(up, sbx, false);
                assertThat(up.call("DELETE", "/v1/checkpoints/" + first, null).status()).isEqualTo(204);

                String uploaderHolder = up.get("/v1/blobs").get("holder").asText();
                int ran = 0, busy = 0;
                Future<String> upload = pool.submit(() -> checkpoint(up, sbx, false));
                while (!upload.isDone()) {
                    var answer = gc.call("POST", "/v1/blobs/gc", null);
                    if (answer.status() == 409) {
                        assertThat(answer.errorCode()).isEqualTo("store_busy");
                        assertThat(answer.body().get("error").get("details").get("holders").toString())
                                .contains(uploaderHolder);
                        busy++;
                    } else {
                        assertThat(answer.status()).as(answer.body().toString()).isEqualTo(200);
                        ran++;
                    }
                }
                String second = upload.get(5, TimeUnit.MINUTES);
                log.atInfo().addKeyValue("collections", ran).addKeyValue("backedOff", busy).log("gc during another instance's upload");
                assertThat(busy).as("collections that backed off for the upload").isPositive();
                gc.post("/v1/blobs/gc", null);
                String restored = restore(gc, second);
                assertThat(gc.sh(restored, "md5sum < /root/big")).isEqualTo(sum);
            }
        }
    }

    private static String[] flags(Path blobs) {
        var flags = new ArrayList<>(List.of("--blob-dir", blobs.toString()));
        flags.addAll(List.of(GC_NOW));
        return flags.toArray(String[]::new);
    }

    /** A durable checkpoint, the call returning once it is in the store. */
    private static String checkpoint(RawApi api, String sandbox, boolean memory) {
        var made = api.post("/v1/sandboxes/" + sandbox + "/checkpoints", "{\"memory\": " + memory + ", \"durable\": true}");
        assertThat(made.get("durable").asBoolean()).isTrue();
        return made.get("id").asText();
    }

    private static String restore(RawApi api, String checkpoint) {
        var restored = api.call("POST", "/v1/sandboxes", "{\"fromCheckpoint\": \"" + checkpoint + "\"}");
        assertThat(restored.status()).as(restored.body().toString()).isEqualTo(201);
        return restored.body().get("id").asText();
    }

    private static List<String> ids(JsonNode list) {
        var ids = new ArrayList<String>();
        list.get("items").forEach(c -> ids.add(c.get("id").asText()));
        return ids;
    }

    private static JsonNode descriptor(Path blobs, String checkpoint) throws IOException {
        return JSON.readTree(Files.readString(blobs.resolve("checkpoints/" + checkpoint + ".json")));
    }

    /** The chunk keys a stored manifest lists, read straight from the directory store. */
    private static Set<String> chunksOf(Path blobs, String manifest) throws IOException {
        var chunks = new HashSet<String>();
        for (var ref : ManifestCodec.decode(Files.readAllBytes(blobs.resolve("manifests/" + manifest))).chunks())
            chunks.add("chunks/" + ref.id().hex().substring(0, 2) + "/" + ref.id().hex());
        return chunks;
    }

    /** Every chunk key some remaining manifest lists. */
    private static Set<String> liveChunks(Path blobs) throws IOException {
        var live = new HashSet<String>();
        try (Stream<Path> manifests = Files.list(blobs.resolve("manifests"))) {
            for (Path m : manifests.toList()) live.addAll(chunksOf(blobs, m.getFileName().toString()));
        }
        return live;
    }

    private static long countChunks(Path blobs) throws IOException {
        try (Stream<Path> walk = Files.walk(blobs.resolve("chunks"))) {
            return walk.filter(Files::isRegularFile).count();
        }
    }

    private static String key(Path dataDir) throws IOException {
        return Files.readString(dataDir.resolve("root.key")).strip();
    }
}
