package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.stasis.blob.content.GcReport;
import io.stasis.blob.content.StoreLocks;
import io.stasis.blob.content.archive.BlobGc;
import io.stasis.core.policy.Durations;
import io.stasis.server.auth.Access;
import java.time.Instant;
import java.util.List;

/** The blob store as the operator sees it: what it holds, and its garbage collection. Root key only. */
final class BlobRoutes {
    private final BlobGc gc;

    BlobRoutes(BlobGc gc) {
        this.gc = gc;
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/blobs", ctx -> ctx.json(StatusView.of(gc.status())), Access.ROOT);
        routes.post("/v1/blobs/gc", ctx -> {
            var outcome = gc.collect();
            ctx.json(GcView.of(outcome.report(), outcome.finishedAt()));
        }, Access.ROOT);
    }

    /** One collection; {@code finishedAt} null for none yet. */
    record GcView(int manifestsKept, int manifestsDeleted, int liveMissing, long chunksKept, long chunksSpared, long chunksDeleted,
                  long bytesFreed, long tookMs, Instant finishedAt) {
        static GcView of(GcReport r, Instant finishedAt) {
            return new GcView(r.manifestsKept(), r.manifestsDeleted(), r.liveMissing(), r.chunksKept(), r.chunksSpared(), r.chunksDeleted(),
                    r.bytesFreed(), r.took().toMillis(), finishedAt);
        }
    }

    record LockView(String holder, String kind, Instant lastModified, boolean stale) {
        static LockView of(StoreLocks.LockInfo l) {
            return new LockView(l.holder(), l.kind().name().toLowerCase(), l.lastModified(), l.stale());
        }
    }

    record UsageView(long manifests, long chunks, long storedBytes) {
    }

    /** {@code gcInterval} as a duration string, null when the service never collects on its own. */
    record StatusView(String holder, UsageView usage, List<LockView> locks, GcView lastGc, String gcInterval) {
        static StatusView of(BlobGc.Status s) {
            return new StatusView(s.holder(), new UsageView(s.usage().manifests(), s.usage().chunks(), s.usage().storedBytes()),
                    s.locks().stream().map(LockView::of).toList(), s.lastGc().map(o -> GcView.of(o.report(), o.finishedAt())).orElse(null),
                    s.interval().map(Durations::format).orElse(null));
        }
    }
}
