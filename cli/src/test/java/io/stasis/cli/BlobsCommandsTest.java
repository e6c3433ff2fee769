package io.stasis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** {@code stasis blobs status|gc} against a fake server: the report in one line, a busy store as a conflict. */
class BlobsCommandsTest {
    private static final String REPORT = """
            {"manifestsKept": 6, "manifestsDeleted": 2, "liveMissing": 0, "chunksKept": 48, "chunksSpared": 1, "chunksDeleted": 9,
             "bytesFreed": 2136955, "tookMs": 12, "finishedAt": "2026-11-29T18:23:48Z"}""";

    @AutoClose
    private final FakeServer server = FakeServer.start();
    private final CliRunner cli = new CliRunner(server);

    @Test
    void gcPrintsWhatItFreedOrExitsWithConflictWhenTheStoreIsBusy() {
        server.json("POST /v1/blobs/gc", 200, REPORT);
        assertThat(cli.run("blobs", "gc")).isZero();
        assertThat(cli.out()).isEqualTo("freed 2.0 MiB: 2 streams, 9 chunks deleted; 6 streams, 48 chunks kept (1 spared) in 12ms\n");

        server.json("POST /v1/blobs/gc", 409, FakeServer.error("store_busy", "another instance is uploading to or collecting in the blob store"));
        assertThat(cli.run("blobs", "gc")).isEqualTo(ExitCodes.CONFLICT);
        assertThat(cli.err()).contains("another instance is uploading");
    }

    @Test
    void statusShowsUsageTheLastCollectionAndTheLocks() {
        server.json("GET /v1/blobs", 200, """
                {"holder": "host-b-9a8b", "usage": {"manifests": 6, "chunks": 49, "storedBytes": 9000000},
                 "locks": [{"holder": "host-a-1f2e", "kind": "shared", "lastModified": "2026-11-29T18:20:00Z", "stale": false}],
                 "lastGc": %s, "gcInterval": null}""".formatted(REPORT));
        assertThat(cli.run("blobs", "status")).isZero();
        assertThat(cli.out()).contains("holder:      host-b-9a8b", "8.6 MiB in 49 chunks, 6 streams", "never (on demand only)",
                "freed 2.0 MiB", "HOLDER", "host-a-1f2e", "shared");
    }
}
