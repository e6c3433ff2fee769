package io.stasis.bench;

import io.stasis.blob.content.ContentStore;
import io.stasis.blob.content.PutResult;
import io.stasis.blob.local.LocalBlobStore;
import io.stasis.blob.s3.S3BlobStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Upload and restore through the content store ({@code ContentStore}, default settings: FastCDC
 * 64 KiB / 256 KiB / 1 MiB, zstd level 3, 4 chunks at once) on each backend: a local directory
 * ({@code LocalBlobStore}) and S3 ({@code S3BlobStore} through the AWS SDK to s3proxy on loopback,
 * keeping its objects on the same disk: {@link S3ProxyOnDisk}).
 *
 * <p>The data: {@code --blob-data-size} (256 MiB) of {@link MixedContent#mixed mixed content},
 * made once in memory, untimed. Each sample, on an empty store of its own: {@code put} of the data
 * (every chunk new: cut, hashed, compressed, written), then {@code open} and read to the end (the
 * restore: each chunk fetched, decompressed and checked against its SHA-256; the bytes are then
 * compared with the data, untimed), then {@code put} of the same data again (every chunk already
 * there: cut, hashed and looked up, nothing written but the manifest). The store is removed after
 * each sample, untimed. MiB/s of the data's length.
 *
 * <p>The restore reads what was just written, from the page cache: the figure is the store's
 * pipeline, not the disk's cold read.
 */
final class BlobThroughput implements Scenario {
    private static final double MIB = 1 << 20;
    private static final long SEED = 0xb10b;

    @Override
    public String name() {
        return "blob-throughput";
    }

    /** Opens an empty store for one sample; closing it removes it. */
    private interface Backend {
        Sample open(int index) throws IOException;
    }

    /** An empty store and what removes it. */
    private record Sample(ContentStore store, AutoCloseable remove) {
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
        if (size < Options.DEFAULT_BLOB_DATA_SIZE)
            details.put("smallData", "quick run: " + (size >> 20) + " MiB per sample instead of " + (Options.DEFAULT_BLOB_DATA_SIZE >> 20)
                    + " MiB (--blob-data-size, --max-size)");
        context.progress().say("blob-throughput: %d MiB of mixed data per sample%s", size >> 20,
                size < Options.DEFAULT_BLOB_DATA_SIZE ? " (small: a quick run)" : "");
        try {
            figures.addAll(measure(context, "local", data, details, i -> {
                Path dir = work.resolve("local-" + i);
                return new Sample(new ContentStore(new LocalBlobStore(dir)), () -> PrivateService.deleteTree(dir));
            }));
            try (var s3 = new S3ProxyOnDisk(Files.createDirectories(work.resolve("s3")))) {
                figures.addAll(measure(context, "s3", data, details, i -> {
                    var config = s3.newBucket();
                    var store = new S3BlobStore(config);
                    return new Sample(new ContentStore(store), () -> {
                        store.close();
                        PrivateService.deleteTree(work.resolve("s3").resolve(config.bucket()));
                    });
                }));
            }
        } finally {
            PrivateService.deleteTree(work);
        }
        return new ScenarioResult(figures, details);
    }

    private List<Figure> measure(BenchContext context, String backend, byte[] data, Map<String, Object> details, Backend backends)
            throws Exception {
        int n = context.counts().blob();
        double mib = data.length / MIB;
        double[] gets = new double[n];
        double[] again = new double[n];
        var stored = new LinkedHashMap<String, Object>();
        double[] puts = context.sampler().run("blob put, get, put again on " + backend, context.counts().warmupOfSlowSeries(), n, i -> {
            var sample = backends.open(i);
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
                if (i >= 0) {
                    gets[i] = mib / ((got - put) / 1e9);
                    again[i] = mib / ((end - got) / 1e9);
                    stored.put("chunks", first.chunks());
                    stored.put("newChunks", first.newChunks());
                    stored.put("storedBytes", first.storedBytes());
                    stored.put("compression", Math.round(100.0 * data.length / first.storedBytes()) / 100.0);
                    stored.put("retries", first.retries() + second.retries());
                }
                return mib / ((put - start) / 1e9);
            }
        });
        details.put(backend, stored);
        String where = backend.equals("local") ? "a local directory (LocalBlobStore)" : "S3 (s3proxy on loopback, objects on disk)";
        String what = Format.number(mib) + " MiB of mixed data";
        return List.of(
                Figure.of("blob.put." + backend + ".mbps", name(), "MiB/s",
                        "ContentStore.put of " + what + " into an empty store on " + where, Stats.of(puts)),
                Figure.of("blob.get." + backend + ".mbps", name(), "MiB/s",
                        "open + read to the end, every chunk verified, of that stream from " + where, Stats.of(gets)),
                Figure.of("blob.put-again." + backend + ".mbps", name(), "MiB/s",
                        "ContentStore.put of the same data again: every chunk already stored on " + where, Stats.of(again)));
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
