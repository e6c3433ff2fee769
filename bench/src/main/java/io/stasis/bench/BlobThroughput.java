package io.stasis.bench;

import io.stasis.blob.content.ContentStore;
import io.stasis.blob.content.ContentStoreConfig;
import io.stasis.blob.content.PutResult;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.blob.s3.S3BlobStore;
import io.stasis.blob.s3.S3BlobStoreConfig;
import io.stasis.testkit.S3TestServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Upload and restore through the content store ({@code ContentStore}: FastCDC, zstd level 3, 4
 * chunks at once) on each backend: a local directory ({@code LocalBlobStore}) and S3
 * ({@code S3BlobStore} through the AWS SDK to s3proxy on loopback, keeping its objects on the same
 * disk: {@link S3TestServer#onDisk}); once per {@linkplain ChunkSize compared chunk size}, and on S3 once
 * more with the default chunks and 8 chunks at once (smaller chunks are more requests; on a real
 * S3 each costs a round trip, which more requests in flight hide).
 *
 * <p>The data: {@code --blob-data-size} (256 MiB) of {@link MixedContent#mixed mixed content},
 * made once in memory, untimed. Each sample, on an empty store of its own: {@code put} of the data
 * (the upload: every chunk new, cut, hashed, compressed, written), then {@code open} and read to
 * the end (the restore: each chunk fetched, decompressed and checked against its SHA-256; the
 * bytes are then compared with the data, untimed), then {@code put} of the same data again (every
 * chunk already there: cut, hashed and looked up, nothing written but the manifest). The store is
 * removed after each sample, untimed. MiB/s of the data's length.
 *
 * <p>The restore reads what was just written, from the page cache: the figure is the store's
 * pipeline, not the disk's cold read.
 */
final class BlobThroughput implements Scenario {
    private static final double MIB = 1 << 20;
    private static final long SEED = 0xb10b;
    /** The S3 variant with more chunks in flight. */
    static final int MORE_CONCURRENCY = 8;

    @Override
    public String name() {
        return "blob-throughput";
    }

    /** Opens an empty store with these settings for one sample; closing the sample removes it. */
    private interface Backend {
        Sample open(int index, ContentStoreConfig config) throws IOException;
    }

    /** An empty store and what removes it. */
    private record Sample(ContentStore store, AutoCloseable remove) {
    }

    /** Settings compared on a backend: a chunk size and how many chunks go at once. */
    private record Variant(ChunkSize chunks, int uploadConcurrency) {
        static Variant of(ChunkSize chunks) {
            return new Variant(chunks, ContentStoreConfig.DEFAULT.uploadConcurrency());
        }

        ContentStoreConfig config() {
            return ContentStoreConfig.DEFAULT.withChunker(chunks.chunker()).withUploadConcurrency(uploadConcurrency);
        }

        boolean isDefault() {
            return chunks.isDefault() && uploadConcurrency == ContentStoreConfig.DEFAULT.uploadConcurrency();
        }

        String suffix() {
            return chunks.suffix() + (uploadConcurrency == ContentStoreConfig.DEFAULT.uploadConcurrency() ? "" : ".concurrency-" + uploadConcurrency);
        }
    }

    /** The samples of one variant on one backend, MiB/s. */
    private record Series(double[] uploads, double[] restores, double[] again) {
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        int size = Math.toIntExact(context.blobDataSize());
        byte[] data = MixedContent.mixed(size, SEED);
        Path work = Files.createTempDirectory(context.service().dataDir(), "bench-blob-throughput-");
        var figures = new ArrayList<Figure>();
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("dataBytes", size);
        details.put("data", "mixed: segments of 64 KiB to 1 MiB, 35% text, 35% binary (executable-like), 30% random (compressed files)");
        details.put("defaultChunks", ChunkSize.ofDefault().describe());
        if (size < Options.DEFAULT_BLOB_DATA_SIZE)
            details.put("smallData", "quick run: " + (size >> 20) + " MiB per sample instead of " + (Options.DEFAULT_BLOB_DATA_SIZE >> 20)
                    + " MiB (--blob-data-size, --max-size)");
        context.progress().say("blob-throughput: %d MiB of mixed data per sample%s", size >> 20,
                size < Options.DEFAULT_BLOB_DATA_SIZE ? " (small: a quick run)" : "");
        var variants = ChunkSize.COMPARED.stream().map(Variant::of).toList();
        var s3Variants = new ArrayList<>(variants);
        s3Variants.add(new Variant(ChunkSize.ofDefault(), MORE_CONCURRENCY));
        try {
            figures.addAll(measure(context, "local", data, variants, details, (i, config) -> {
                Path dir = work.resolve("local-" + i);
                return new Sample(new ContentStore(new LocalBlobStore(dir), config, Clock.systemUTC()), () -> PrivateService.deleteTree(dir));
            }));
            try (var s3 = S3TestServer.onDisk(Files.createDirectories(work.resolve("s3")))) {
                var key = new S3BlobStoreConfig.Credentials(s3.credentials().accessKeyId(), s3.credentials().secretAccessKey());
                figures.addAll(measure(context, "s3", data, s3Variants, details, (i, config) -> {
                    var bucket = s3.newBucket();
                    var store = new S3BlobStore(S3BlobStoreConfig.of(s3.endpoint(), bucket, "us-east-1", key));
                    return new Sample(new ContentStore(store, config, Clock.systemUTC()), () -> {
                        store.close();
                        PrivateService.deleteTree(work.resolve("s3").resolve(bucket));
                    });
                }));
            }
        } finally {
            PrivateService.deleteTree(work);
        }
        return new ScenarioResult(figures, details);
    }

    /**
     * Each round takes one sample of every variant in turn, so that a change in the machine's load
     * (shared with other work) falls on all of them alike rather than on whichever ran then.
     */
    private List<Figure> measure(BenchContext context, String backend, byte[] data, List<Variant> variants, Map<String, Object> details,
                                 Backend backends) throws Exception {
        int n = context.counts().blob();
        var series = new LinkedHashMap<Variant, Series>();
        var stored = new LinkedHashMap<Variant, Map<String, Object>>();
        for (Variant variant : variants) {
            series.put(variant, new Series(new double[n], new double[n], new double[n]));
            stored.put(variant, new LinkedHashMap<>());
        }
        Variant standard = variants.stream().filter(Variant::isDefault).findFirst().orElseThrow();
        context.sampler().run("blob upload, restore, upload again on " + backend + ", each of "
                        + variants.stream().map(v -> v.suffix().substring(1)).toList() + " in turn (p50: the default's upload)",
                context.counts().warmupOfSlowSeries(), n, i -> {
                    for (Variant variant : variants) sample(backend, data, variant, i, series.get(variant), stored.get(variant), backends);
                    return i >= 0 ? series.get(standard).uploads()[i] : 0;
                });
        String where = backend.equals("local") ? "a local directory (LocalBlobStore)" : "S3 (s3proxy on loopback, objects on disk)";
        String what = Format.number(data.length / MIB) + " MiB of mixed data";
        var figures = new ArrayList<Figure>();
        Series s = series.get(standard);
        figures.add(Figure.of("blob.upload." + backend + ".mbps", name(), "MiB/s",
                "upload: ContentStore.put of " + what + " into an empty store on " + where + " (default settings)", Stats.of(s.uploads())));
        figures.add(Figure.of("blob.restore." + backend + ".mbps", name(), "MiB/s",
                "restore: open + read to the end, every chunk verified, of that stream from " + where, Stats.of(s.restores())));
        figures.add(Figure.of("blob.upload-again." + backend + ".mbps", name(), "MiB/s",
                "ContentStore.put of the same data again: every chunk already stored on " + where, Stats.of(s.again())));
        var bySettings = new LinkedHashMap<String, Object>();
        series.forEach((variant, v) -> {
            String settings = "chunks of " + variant.chunks().describe() + ", " + variant.uploadConcurrency() + " at once";
            figures.add(Figure.of("blob.upload." + backend + ".mbps" + variant.suffix(), name(), "MiB/s",
                    "upload to " + where + " with " + settings, Stats.of(v.uploads())));
            figures.add(Figure.of("blob.restore." + backend + ".mbps" + variant.suffix(), name(), "MiB/s",
                    "restore from " + where + " with " + settings, Stats.of(v.restores())));
            bySettings.put(variant.suffix().substring(1), stored.get(variant));
        });
        details.put(backend, stored.get(standard));
        details.put(backend + "BySettings", bySettings);
        return figures;
    }

    /** One sample of a variant: upload, restore, upload again, on an empty store; {@code i < 0} is a warm-up. */
    private static void sample(String backend, byte[] data, Variant variant, int i, Series series, Map<String, Object> stored,
                               Backend backends) throws Exception {
        double mib = data.length / MIB;
        var sample = backends.open(i, variant.config());
        try (AutoCloseable remove = sample.remove()) {
            ContentStore store = sample.store();
            long start = System.nanoTime();
            PutResult first = store.put(data);
            long put = System.nanoTime();
            byte[] back = readAll(store.open(first.manifest()), data.length);
            long got = System.nanoTime();
            PutResult second = store.put(data);
            long end = System.nanoTime();
            if (!Arrays.equals(back, data)) throw new IllegalStateException("the restore from " + backend + " differs from what was put");
            if (second.newChunks() != 0 || !second.manifest().equals(first.manifest()))
                throw new IllegalStateException("the second put on " + backend + " stored " + second.newChunks() + " new chunks");
            if (i < 0) return;
            series.uploads()[i] = mib / ((put - start) / 1e9);
            series.restores()[i] = mib / ((got - put) / 1e9);
            series.again()[i] = mib / ((end - got) / 1e9);
            stored.put("chunks", first.chunks());
            stored.put("chunksPerGiB", Math.round(first.chunks() * (double) (1L << 30) / data.length));
            stored.put("meanChunkKiB", Math.round(data.length / 1024.0 / first.chunks()));
            stored.put("storedBytes", first.storedBytes());
            stored.put("compression", Math.round(100.0 * data.length / first.storedBytes()) / 100.0);
            stored.put("retries", first.retries() + second.retries());
        }
    }

    private static byte[] readAll(InputStream stream, int length) {
        try (InputStream in = stream) {
            byte[] bytes = in.readNBytes(length);
            if (bytes.length != length || in.read() != -1)
                throw new IllegalStateException("the restored stream is not " + length + " bytes long");
            return bytes;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
