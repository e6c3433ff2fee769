package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** The blob store's status and garbage collection against the fake API; a busy store is a conflict naming the holders. */
class BlobsTest {
    private static final String REPORT = """
            {"manifestsKept": 6, "manifestsDeleted": 2, "liveMissing": 0, "chunksKept": 48, "chunksSpared": 1, "chunksDeleted": 9,
             "bytesFreed": 2136955, "tookMs": 12, "finishedAt": "2026-11-29T18:23:48Z"}""";

    @AutoClose
    private final FakeApi api = FakeApi.start();
    @AutoClose
    private final StasisClient client = api.client();

    @Test
    void gcReturnsTheReportAndABusyStoreIsAConflict() {
        api.json("POST /v1/blobs/gc", 200, REPORT);
        var report = client.blobs().gc();
        assertThat(report.manifestsDeleted()).isEqualTo(2);
        assertThat(report.chunksDeleted()).isEqualTo(9);
        assertThat(report.bytesFreed()).isEqualTo(2_136_955);
        assertThat(report.finishedAt()).isEqualTo(Instant.parse("2026-11-29T18:23:48Z"));

        api.json("POST /v1/blobs/gc", 409, """
                {"error": {"code": "store_busy", "message": "another instance is uploading", "details": {"holders": ["host-a-1f2e"]}}}""");
        assertThatThrownBy(() -> client.blobs().gc()).isInstanceOfSatisfying(ConflictException.class, e -> {
            assertThat(e.code()).isEqualTo("store_busy");
            assertThat(e.details().get("holders").toString()).contains("host-a-1f2e");
        });
    }

    @Test
    void statusShowsUsageLocksAndTheLastCollection() {
        api.json("GET /v1/blobs", 200, """
                {"holder": "host-b-9a8b", "usage": {"manifests": 6, "chunks": 49, "storedBytes": 9000000},
                 "locks": [{"holder": "host-a-1f2e", "kind": "shared", "lastModified": "2026-11-29T18:20:00Z", "stale": false}],
                 "lastGc": %s, "gcInterval": "6h"}""".formatted(REPORT));
        var status = client.blobs().status();
        assertThat(status.holder()).isEqualTo("host-b-9a8b");
        assertThat(status.usage()).isEqualTo(new BlobStoreStatus.Usage(6, 49, 9_000_000));
        assertThat(status.locks()).singleElement().satisfies(l -> {
            assertThat(l.kind()).isEqualTo("shared");
            assertThat(l.stale()).isFalse();
        });
        assertThat(status.lastGc().chunksSpared()).isEqualTo(1);
        assertThat(status.gcInterval()).isEqualTo("6h");
    }
}
