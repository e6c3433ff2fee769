package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.volume.VolumeSnapshotId;
import io.stasis.core.volume.VolumeSyncId;
import io.stasis.testkit.HostLeaks;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Volumes beyond one service: they survive a restart of the service (with a sandbox using one
 * running throughout), and their syncs restore on another instance that shares the blob store.
 */
@Tag("root")
class VolumeSyncIT {

    private static String sandbox(RawApi api, String volumesJson) {
        return api.post("/v1/sandboxes", "{\"template\": \"tiny\", \"volumes\": " + volumesJson
                + ", \"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}").get("id").asText();
    }

    @Test
    void aSyncedVolumeIsRestoredOnAnotherInstanceSharingTheBlobStore() throws Exception {
        Path first = Files.createTempDirectory("stasis-volsync-a");
        Path second = Files.createTempDirectory("stasis-volsync-b");
        // The blob store lives outside both data directories; each sees it at <data-dir>/blobs.
        Path blobs = Files.createTempDirectory("stasis-volsync-blobs");
        Files.createSymbolicLink(first.resolve("blobs"), blobs);
        Files.createSymbolicLink(second.resolve("blobs"), blobs);
        String vid;
        String firstSync;
        var figures = new ArrayList<String>();
        try {
        try (var a = ServiceFixture.startIn(first); var api = new RawApi(a.url, a.rootKey)) {
            vid = api.post("/v1/volumes", "{\"name\": \"data\", \"sizeMb\": 256}").get("id").asText();
            String id = sandbox(api, "[{\"volume\": \"data\", \"path\": \"/data\"}]");
            // 32 MiB of random data in 32 files, and a small one.
            api.sh(id, "mkdir -p /data/d && for i in $(seq 1 32); do head -c 1048576 /dev/urandom > /data/d/f$i; done;"
                    + " echo v1 > /data/note");
            long start = System.nanoTime();
            var full = api.post("/v1/volumes/data/sync", null);
            figures.add("full sync of 32 MiB: " + (System.nanoTime() - start) / 1_000_000 + " ms, stream " + full.get("streamBytes").asLong() + " B");
            firstSync = full.get("id").asText();
            assertThat(firstSync).startsWith("vsync_");
            assertThat(full.get("parentId").isNull()).isTrue();
            assertThat(full.get("streamBytes").asLong()).isGreaterThan(32L << 20);

            // Change one file of 32 and the note: the next sync sends only that.
            api.sh(id, "head -c 1048576 /dev/urandom > /data/d/f7; echo v2 > /data/note; rm /data/d/f9");
            start = System.nanoTime();
            var incremental = api.post("/v1/volumes/" + vid + "/sync", null);
            figures.add("incremental sync after changing 1 MiB: " + (System.nanoTime() - start) / 1_000_000 + " ms, stream "
                    + incremental.get("streamBytes").asLong() + " B");
            assertThat(incremental.get("parentId").asText()).isEqualTo(firstSync);
            assertThat(incremental.get("streams").asInt()).isEqualTo(2);
            assertThat(incremental.get("streamBytes").asLong()).isBetween(1L << 20, 3L << 20);
            assertThat(api.get("/v1/volumes/data/syncs").get("items")).hasSize(2);
            api.call("DELETE", "/v1/sandboxes/" + id, null);
            api.call("DELETE", "/v1/volumes/data", null);
        }
        // The first instance's data directory is gone (its fixture deleted it); only the shared blob store remains.
        assertThat(first).doesNotExist();
        try (var b = ServiceFixture.startIn(second); var api = new RawApi(b.url, b.rootKey)) {
            long start = System.nanoTime();
            var latest = api.post("/v1/volumes", "{\"name\": \"restored\", \"fromSync\": \"" + vid + "\"}");
            figures.add("restore (2 streams, 33 MiB): " + (System.nanoTime() - start) / 1_000_000 + " ms");
            assertThat(latest.get("sizeMb").asLong()).isEqualTo(256);
            var old = api.post("/v1/volumes", "{\"name\": \"restored-old\", \"fromSync\": \"" + firstSync + "\"}");
            assertThat(old.get("origin").asText()).isEqualTo(firstSync);
            String id = sandbox(api, "[{\"volume\": \"restored\", \"path\": \"/new\"}, {\"volume\": \"restored-old\", \"path\": \"/old\"}]");
            assertThat(api.sh(id, "cat /new/note /old/note")).isEqualTo("v2\nv1\n");
            assertThat(api.sh(id, "ls /new/d | wc -l; ls /old/d | wc -l")).isEqualTo("31\n32\n");
            assertThat(api.sh(id, "cmp -s /new/d/f1 /old/d/f1 && echo same; cmp -s /new/d/f7 /old/d/f7 || echo differs")).isEqualTo("same\ndiffers\n");
            // The restored volume is an ordinary one: writable, and syncs again.
            api.sh(id, "echo v3 > /new/note");
            assertThat(api.post("/v1/volumes/restored/sync", null).get("parentId").isNull()).isTrue();
            assertThat(api.call("POST", "/v1/volumes", "{\"name\": \"x\", \"fromSync\": \"vsync_0000000000000000\"}").errorCode())
                    .isEqualTo("volume_sync_not_found");
            api.call("DELETE", "/v1/sandboxes/" + id, null);
            api.call("DELETE", "/v1/volumes/restored", null);
            api.call("DELETE", "/v1/volumes/restored-old", null);
        }
        } finally {
            ServiceFixture.deleteTree(blobs);
        }
        System.out.println("VolumeSyncIT figures: " + String.join("; ", figures));
    }

    private static List<String> subvolumesIn(Path dir) throws IOException {
        try (var entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static void run(String... command) throws Exception {
        var process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor()).as(String.join(" ", command) + ": " + output).isZero();
    }

    @Test
    void volumesAndTheirMountsSurviveARestartOfTheService() throws Exception {
        Path dataDir = Files.createTempDirectory("stasis-volrestart");
        var flags = new ArrayList<>(List.of("--port", "0", "--preview-port", "0", "--data-dir", dataDir.toString(), "--pool-size", "8G",
                "--default-template", "tiny", "--no-slow-templates"));
        flags.addAll(TestNetworkFlags.forDataDir(dataDir));
        String[] args = flags.toArray(String[]::new);
        String id;
        String keptSnapshot;
        String keptSync;
        try {
            try (var daemon = Daemon.start(ServerConfig.parse(args));
                 var api = new RawApi("http://127.0.0.1:" + daemon.port(), Files.readString(daemon.rootKeyFile()).strip())) {
                api.post("/v1/volumes", "{\"name\": \"lasting\", \"sizeMb\": 64}");
                id = sandbox(api, "[{\"volume\": \"lasting\", \"path\": \"/keep\"}]");
                api.sh(id, "echo before > /keep/f");
                keptSnapshot = api.post("/v1/volumes/lasting/snapshots", null).get("id").asText();
                api.post("/v1/volumes/lasting/sync", null);
                keptSync = api.post("/v1/volumes/lasting/sync", null).get("id").asText();
                // What a crash mid-snapshot or mid-sync leaves: subvolumes the catalog never recorded (injected on purpose).
                String vid = api.get("/v1/volumes/lasting").get("id").asText();
                Path pool = dataDir.resolve("btrfs");
                for (Path orphan : List.of(pool.resolve("volume-snapshots").resolve(VolumeSnapshotId.random().value()),
                        pool.resolve("volume-syncs").resolve(VolumeSyncId.random().value())))
                    run("btrfs", "subvolume", "snapshot", "-r", pool.resolve("volumes").resolve(vid).toString(), orphan.toString());
                assertThat(subvolumesIn(pool.resolve("volume-snapshots"))).hasSize(2);
                assertThat(subvolumesIn(pool.resolve("volume-syncs"))).hasSize(2);
            } // the service stops; the sandbox keeps running
            assertThat(HostLeaks.processesOf(Set.of(new SandboxId(id)))).isNotEmpty();
            try (var fixture = ServiceFixture.startIn(dataDir); var api = new RawApi(fixture.url, fixture.rootKey)) {
                // The start removed the orphans and kept what the catalog knows: the snapshot, and the newest sync's base.
                Path pool = dataDir.resolve("btrfs");
                assertThat(subvolumesIn(pool.resolve("volume-snapshots"))).containsExactly(keptSnapshot);
                assertThat(subvolumesIn(pool.resolve("volume-syncs"))).containsExactly(keptSync);
                assertThat(api.post("/v1/volumes", "{\"name\": \"branched\", \"fromSnapshot\": \"" + keptSnapshot + "\"}").get("id").asText())
                        .startsWith("vol_");
                assertThat(api.post("/v1/volumes/lasting/sync", null).get("parentId").asText()).isEqualTo(keptSync);
                api.call("DELETE", "/v1/volumes/branched", null);
                assertThat(api.get("/v1/volumes/lasting").get("mountedBy").get(0).get("sandboxId").asText()).isEqualTo(id);
                assertThat(api.sh(id, "cat /keep/f")).isEqualTo("before\n");
                api.post("/v1/sandboxes/" + id + "/hibernate", null);
                api.post("/v1/sandboxes/" + id + "/resume", null);
                api.sh(id, "echo after >> /keep/f");
                api.post("/v1/sandboxes/" + id + "/stop", null);
                api.post("/v1/sandboxes/" + id + "/start", null);
                assertThat(api.sh(id, "cat /keep/f")).isEqualTo("before\nafter\n");
                api.call("DELETE", "/v1/sandboxes/" + id, null);
                assertThat(api.call("DELETE", "/v1/volumes/lasting", null).status()).isEqualTo(204);
            }
        } finally {
            if (Files.exists(dataDir)) ServiceFixture.deleteTree(dataDir);
        }
    }
}
