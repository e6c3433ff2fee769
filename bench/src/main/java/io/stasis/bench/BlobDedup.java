package io.stasis.bench;

import io.stasis.blob.content.ContentStore;
import io.stasis.blob.content.ContentStoreConfig;
import io.stasis.blob.content.PutResult;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.core.sandbox.Resources;
import io.stasis.sdk.Checkpoint;
import io.stasis.sdk.CheckpointRequest;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.Sandbox;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The dedup figure: two checkpoints of a root of 1 GiB ({@code --blob-root-size}) that
 * changed by 1% in between; what the second adds to the store. Measured on the raw streams for
 * each compared chunk size, and through the service's durable checkpoints.
 *
 * <p>On the service's btrfs pool: a subvolume filled with a {@link RootTree} (sandbox-like files of
 * mixed content); a read-only snapshot; {@link RootTree#edit small edits} in files picked at
 * random until the files edited hold 1% of the tree's bytes; a second read-only snapshot. The full
 * {@code btrfs send} stream of each snapshot ({@link BtrfsSend}, piped, nothing on disk) is put
 * into one empty local content store ({@code LocalBlobStore}), first then second, once per
 * {@linkplain ChunkSize compared chunk size} (64, 128, 256 KiB on average). Figure: the bytes the
 * second put wrote (new chunks compressed, and its manifest) in % of what the first wrote; the
 * headline is the default chunker's. Also the incremental variant: {@code btrfs send -p first
 * second} put into an empty store of its own, in % of the first full stream's stored bytes.
 *
 * <p>Then the product path ({@link #durableCheckpoints}): the same tree and edits in a sandbox,
 * and two durable checkpoints through the API; the second is an incremental send.
 *
 * <p>Nothing here is timed against a goal but the ratios; the puts' durations are in the details.
 */
final class BlobDedup implements Scenario {
    /** The goal: the second checkpoint stores at most 3% of the first. */
    static final double TARGET_PERCENT = 3;
    static final double CHANGED = 0.01;
    private static final double MIB = 1 << 20;
    private static final long TREE_SEED = 0x7ee;
    private static final long EDIT_SEED = 0xed17;
    private static final Duration SEND_TIMEOUT = Duration.ofMinutes(30);

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

            // Both full streams through one empty store per compared chunk size; the default's is the headline figure.
            var variants = new LinkedHashMap<ChunkSize, Puts>();
            for (ChunkSize chunks : ChunkSize.COMPARED) {
                var store = new ContentStore(new LocalBlobStore(lab.newDirectory("blob-dedup-store-" + chunks.label())),
                        ContentStoreConfig.DEFAULT.withChunker(chunks.chunker()), Clock.systemUTC());
                Timed full1 = timed(() -> send.stream(first, Optional.empty(), store::put));
                Timed full2 = timed(() -> send.stream(second, Optional.empty(), store::put));
                variants.put(chunks, new Puts(full1, full2));
                context.progress().say("blob-dedup: full send streams stored with %s chunks in %.1f s and %.1f s: the second adds %.2f%%",
                        chunks.label(), full1.seconds(), full2.seconds(), percentOf(full2.result(), full1.result()));
            }
            ChunkSize standard = ChunkSize.ofDefault();
            var alone = new ContentStore(new LocalBlobStore(lab.newDirectory("blob-incremental-store")));
            Timed incremental = timed(() -> send.stream(second, Optional.of(first), alone::put));

            PutResult a = variants.get(standard).first().result();
            PutResult b = variants.get(standard).second().result();
            PutResult c = incremental.result();
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
            details.put("defaultChunks", standard.describe());
            details.put("firstFullSend", describe(a, variants.get(standard).first().seconds()));
            details.put("secondFullSend", describe(b, variants.get(standard).second().seconds()));
            details.put("incrementalSend", describe(c, incremental.seconds()));
            details.put("secondNewLogicalPercent", Math.round(10000.0 * b.newLogicalBytes() / a.logicalBytes()) / 100.0);
            Map<String, Object> bySize = new LinkedHashMap<>();
            variants.forEach((chunks, puts) -> {
                Map<String, Object> v = new LinkedHashMap<>();
                v.put("chunker", chunks.describe());
                v.put("first", describe(puts.first().result(), puts.first().seconds()));
                v.put("second", describe(puts.second().result(), puts.second().seconds()));
                bySize.put(chunks.label(), v);
            });
            details.put("chunkSizes", bySize);
            for (Path p : List.of(second, first, live)) lab.deleteSubvolume(p);
            // btrfs frees a deleted subvolume's extents in the background: wait here, not in the pool's unmount at teardown.
            send.awaitDeletedSubvolumes(service.btrfsMount());
            var figures = new ArrayList<Figure>();
            figures.add(Figure.of("blob.dedup.second-checkpoint-percent", name(), "%",
                    "bytes stored by the full btrfs send stream of a " + (tree.bytes() >> 20) + " MiB root after 1% of it changed, "
                            + "in % of the first one's (default chunks, " + standard.describe() + ")", Stats.single(percentOf(b, a)))
                    .withTarget(Target.atMost(TARGET_PERCENT)));
            figures.add(Figure.of("blob.dedup.incremental-send-percent", name(), "%",
                    "bytes stored by the incremental stream (btrfs send -p first second) alone, in % of the first full one's",
                    Stats.single(percentOf(c, a))));
            variants.forEach((chunks, puts) -> figures.add(Figure.of("blob.dedup.second-checkpoint-percent" + chunks.suffix(), name(), "%",
                    "the same two full streams through a store cutting chunks of " + chunks.describe() + " (min / average / max)"
                            + (chunks.isDefault() ? ": the default" : ""), Stats.single(percentOf(puts.second().result(), puts.first().result())))));
            figures.addAll(durableCheckpoints(context, details));
            return new ScenarioResult(figures, details);
        }
    }

    /**
     * The product path: the same tree and the same edits in the root of a tiny sandbox of the
     * private service (written from the host into its root subvolume, untimed), and a durable
     * files checkpoint through the SDK ({@code durable: true}: the call returns once it is in the
     * service's blob store, a local directory) before and after the edits. The first sends the
     * root whole, the second incrementally to the first; each reports what it added to the store
     * ({@code storedBytes}).
     */
    private List<Figure> durableCheckpoints(BenchContext context, Map<String, Object> details) throws Exception {
        var service = context.service();
        long size = context.blobRootSize();
        Sandbox sandbox = service.create(CreateSandboxRequest.builder().template("tiny")
                .diskMb(Math.toIntExact(Math.max(Resources.DEFAULT_DISK_MB, 2 * (size >> 20) + 1024))).build());
        try {
            Path dir = Files.createDirectories(service.sandboxRoot(sandbox.id()).resolve("root/bench-tree"));
            context.progress().say("blob-dedup: writing the tree into the root of sandbox %s for two durable checkpoints", sandbox.id());
            RootTree tree = RootTree.write(dir, size, TREE_SEED);
            var durable = CheckpointRequest.builder().memory(false).durable(true).build();
            long start = System.nanoTime();
            Checkpoint first = sandbox.checkpoint(durable);
            double firstSeconds = (System.nanoTime() - start) / 1e9;
            RootTree.Edits edits = tree.edit(CHANGED, EDIT_SEED);
            start = System.nanoTime();
            Checkpoint second = sandbox.checkpoint(durable);
            double secondSeconds = (System.nanoTime() - start) / 1e9;
            for (Checkpoint c : List.of(first, second))
                if (!c.durable() || c.storedBytes() == null || c.logicalBytes() == null)
                    throw new IllegalStateException("checkpoint " + c.id() + " came back without being durable: " + c);
            double percent = 100.0 * second.storedBytes() / first.storedBytes();
            context.progress().say("blob-dedup: durable checkpoints took %.1f s and %.1f s: the second adds %.3f%%", firstSeconds,
                    secondSeconds, percent);
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("store", "the private service's blob store: local, <data-dir>/blobs");
            d.put("filesEdited", edits.files());
            d.put("first", describe(first, firstSeconds));
            d.put("second", describe(second, secondSeconds));
            details.put("durableCheckpoints", d);
            return List.of(Figure.of("blob.dedup.durable-checkpoint-percent", name(), "%",
                    "storedBytes of the second of two durable checkpoints (POST .../checkpoints {durable: true}) of a sandbox whose "
                            + (tree.bytes() >> 20) + " MiB root changed by 1% between them, in % of the first's",
                    Stats.single(percent)).withTarget(Target.atMost(TARGET_PERCENT)));
        } finally {
            sandbox.delete();
        }
    }

    private static Map<String, Object> describe(Checkpoint checkpoint, double seconds) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("id", checkpoint.id());
        d.put("logicalBytes", checkpoint.logicalBytes());
        d.put("storedBytes", checkpoint.storedBytes());
        d.put("seconds", Math.round(seconds * 100) / 100.0);
        d.put("logicalMibPerSecond", Math.round(checkpoint.logicalBytes() / MIB / seconds * 10) / 10.0);
        return d;
    }

    private static double percentOf(PutResult second, PutResult first) {
        return 100.0 * second.storedBytes() / first.storedBytes();
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

    /** The two full streams, first and second, through one store. */
    private record Puts(Timed first, Timed second) {
    }

    private static Timed timed(Supplier<PutResult> put) {
        long start = System.nanoTime();
        PutResult result = put.get();
        return new Timed(result, (System.nanoTime() - start) / 1e9);
    }
}
