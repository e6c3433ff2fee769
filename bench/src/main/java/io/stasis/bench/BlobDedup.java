package io.stasis.bench;

import io.stasis.blob.content.ContentStore;
import io.stasis.blob.content.ContentStoreConfig;
import io.stasis.blob.content.PutResult;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.core.blob.FastCdc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The dedup figure: two checkpoints of a root of 1 GiB ({@code --blob-root-size}) that
 * changed by 1% in between, each stored whole through the content store; what the second adds.
 *
 * <p>On the service's btrfs pool: a subvolume filled with a {@link RootTree} (sandbox-like files of
 * mixed content); a read-only snapshot; {@link RootTree#edit small edits} in files picked at
 * random until the files edited hold 1% of the tree's bytes; a second read-only snapshot. The full
 * {@code btrfs send} stream of each snapshot ({@link BtrfsSend}, piped, nothing on disk) is put
 * into one empty local content store ({@code LocalBlobStore}, default settings), first then
 * second. Figure: the bytes the second put wrote (new chunks compressed, and its manifest) in % of
 * what the first wrote. Also the incremental variant: {@code btrfs send -p first second} put into
 * an empty store of its own, in % of the first full stream's stored bytes; and the first figure
 * again with chunks of 64 KiB on average instead of 256 KiB (both streams through a third store).
 *
 * <p>Nothing here is timed against a goal but the ratio; the puts' durations are in the details.
 */
final class BlobDedup implements Scenario {
    /** The goal: the second checkpoint stores at most 3% of the first. */
    static final double TARGET_PERCENT = 3;
    static final double CHANGED = 0.01;
    private static final long TREE_SEED = 0x7ee;
    private static final long EDIT_SEED = 0xed17;
    private static final Duration SEND_TIMEOUT = Duration.ofMinutes(30);
    /** A finer chunker than the default (64 KiB / 256 KiB / 1 MiB), for comparison. */
    private static final FastCdc FINE = new FastCdc(16 << 10, 64 << 10, 256 << 10);

    @Override
    public String name() {
        return "blob-dedup";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var service = context.service();
        long size = context.blobRootSize();
        Map<String, Object> details = new LinkedHashMap<>();
        if (size < Options.DEFAULT_BLOB_ROOT_SIZE)
            details.put("smallRoot", "quick run: a root of " + (size >> 20) + " MiB instead of " + (Options.DEFAULT_BLOB_ROOT_SIZE >> 20)
                    + " MiB (--blob-root-size, --max-size)");
        long poolFree = Files.getFileStore(service.btrfsMount()).getUsableSpace();
        if (poolFree < 2 * size + (1L << 30))
            throw new IllegalStateException("the pool has " + (poolFree >> 20) + " MiB free; a root of " + (size >> 20) + " MiB needs "
                    + ((2 * size + (1L << 30)) >> 20));
        try (var lab = new FloorLab(service)) {
            Path live = lab.newSubvolumePath();
            lab.btrfs.create(live);
            long start = System.nanoTime();
            context.progress().say("blob-dedup: writing a root of %d MiB%s", size >> 20,
                    size < Options.DEFAULT_BLOB_ROOT_SIZE ? " (small: a quick run)" : "");
            RootTree tree = RootTree.write(live, size, TREE_SEED);
            Path first = lab.newSubvolumePath();
            lab.btrfs.snapshot(live, first, true);
            RootTree.Edits edits = tree.edit(CHANGED, EDIT_SEED);
            Path second = lab.newSubvolumePath();
            lab.btrfs.snapshot(live, second, true);
            context.progress().say("blob-dedup: %d files, %d MiB, written and snapshotted twice in %.1f s; %d files edited (%d KiB written)",
                    tree.files(), tree.bytes() >> 20, (System.nanoTime() - start) / 1e9, edits.files(), edits.bytesWritten() >> 10);
            var send = new BtrfsSend(lab.newDirectory("send-logs"), SEND_TIMEOUT);

            var store = new ContentStore(new LocalBlobStore(lab.newDirectory("blob-dedup-store")));
            Timed full1 = timed(() -> send.stream(first, Optional.empty(), store::put));
            context.progress().say("blob-dedup: first full send stream stored in %.1f s", full1.seconds());
            Timed full2 = timed(() -> send.stream(second, Optional.empty(), store::put));
            context.progress().say("blob-dedup: second full send stream stored in %.1f s", full2.seconds());
            var alone = new ContentStore(new LocalBlobStore(lab.newDirectory("blob-incremental-store")));
            Timed incremental = timed(() -> send.stream(second, Optional.of(first), alone::put));
            // The same two streams cut finer: what the default chunk size costs the dedup figure.
            var fine = new ContentStore(new LocalBlobStore(lab.newDirectory("blob-dedup-store-64k")),
                    ContentStoreConfig.DEFAULT.withChunker(FINE), Clock.systemUTC());
            Timed fine1 = timed(() -> send.stream(first, Optional.empty(), fine::put));
            Timed fine2 = timed(() -> send.stream(second, Optional.empty(), fine::put));
            context.progress().say("blob-dedup: incremental stream and the 64 KiB-chunk variant stored");

            PutResult a = full1.result();
            PutResult b = full2.result();
            PutResult c = incremental.result();
            double percent = 100.0 * b.storedBytes() / a.storedBytes();
            double incrementalPercent = 100.0 * c.storedBytes() / a.storedBytes();
            double finePercent = 100.0 * fine2.result().storedBytes() / fine1.result().storedBytes();
            Map<String, Object> root = new LinkedHashMap<>();
            root.put("files", tree.files());
            root.put("bytes", tree.bytes());
            root.put("seed", TREE_SEED);
            details.put("root", root);
            Map<String, Object> edited = new LinkedHashMap<>();
            edited.put("filesEdited", edits.files());
            edited.put("bytesOfFilesEdited", edits.filesBytes());
            edited.put("percentOfRootInFilesEdited", Math.round(10000.0 * edits.filesBytes() / tree.bytes()) / 100.0);
            edited.put("bytesWritten", edits.bytesWritten());
            details.put("edits", edited);
            details.put("firstFullSend", describe(a, full1.seconds()));
            details.put("secondFullSend", describe(b, full2.seconds()));
            details.put("incrementalSend", describe(c, incremental.seconds()));
            details.put("secondNewLogicalPercent", Math.round(10000.0 * b.newLogicalBytes() / a.logicalBytes()) / 100.0);
            details.put("firstFullSend64k", describe(fine1.result(), fine1.seconds()));
            details.put("secondFullSend64k", describe(fine2.result(), fine2.seconds()));
            for (Path p : List.of(second, first, live)) lab.deleteSubvolume(p);
            // btrfs frees a deleted subvolume's extents in the background: wait here, not in the pool's unmount at teardown.
            send.awaitDeletedSubvolumes(service.btrfsMount());
            var figures = new ArrayList<Figure>();
            figures.add(Figure.of("blob.dedup.second-checkpoint-percent", name(), "%",
                    "bytes stored by the full btrfs send stream of a " + (tree.bytes() >> 20) + " MiB root after 1% of it changed, "
                            + "in % of the first one's", Stats.single(percent)).withTarget(Target.atMost(TARGET_PERCENT)));
            figures.add(Figure.of("blob.dedup.incremental-send-percent", name(), "%",
                    "bytes stored by the incremental stream (btrfs send -p first second) alone, in % of the first full one's",
                    Stats.single(incrementalPercent)));
            figures.add(Figure.of("blob.dedup.second-checkpoint-percent.chunks-64k", name(), "%",
                    "the same two full streams through a store cutting chunks of 64 KiB on average (16 KiB-256 KiB) instead of 256 KiB",
                    Stats.single(finePercent)));
            return new ScenarioResult(figures, details);
        }
    }

    private static Map<String, Object> describe(PutResult put, double seconds) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("streamBytes", put.logicalBytes());
        d.put("chunks", put.chunks());
        d.put("newChunks", put.newChunks());
        d.put("newLogicalBytes", put.newLogicalBytes());
        d.put("storedBytes", put.storedBytes());
        d.put("seconds", Math.round(seconds * 100) / 100.0);
        return d;
    }

    private record Timed(PutResult result, double seconds) {
    }

    private static Timed timed(java.util.function.Supplier<PutResult> put) {
        long start = System.nanoTime();
        PutResult result = put.get();
        return new Timed(result, (System.nanoTime() - start) / 1e9);
    }
}
