package io.stasis.bench;

import io.stasis.sdk.Checkpoint;
import io.stasis.sdk.CheckpointRequest;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ExecResult;
import io.stasis.sdk.Sandbox;
import io.stasis.testkit.S3TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A sandbox holding 1 GiB of memory, made durable and restored on a fresh instance, on each blob
 * backend: what moving a live sandbox to another host costs, through the API.
 *
 * <p>Upload: a {@code base} sandbox (memoryMb 2048) whose python3 holds {@code min(1 GiB,
 * --max-size)} of random bytes (every page written; random, so neither dedup nor compression
 * shrinks it) and answers on request with a SHA-256 of one byte of every page; a memory
 * checkpoint with {@code durable: true} through the SDK, timed until it returns (CRIU dump, the
 * root's full {@code btrfs send} stream and the image into the blob store). The sandbox is then
 * deleted; its durable copy stays.
 *
 * <p>Restore: a fresh instance ({@link PrivateService} on a data directory of its own, its own
 * pool, catalog and network; no warm pool, no {@code base} template) sharing only the blob store;
 * {@code POST /v1/sandboxes {"fromCheckpoint"}} (root stream received, image imported, processes
 * restored), then an exec that asks the restored python3 to read its memory and answer; timed from
 * the create call until the answer is back and matches the one before the checkpoint. {@code
 * --blob-n} restores, each fetching everything again; each restored sandbox is deleted untimed.
 *
 * <p>Backends: {@code local}, the benchmark's service uploading to its default store (a directory
 * of its data directory) and the fresh instance started with {@code --blob-dir} on it; {@code s3},
 * an instance started with {@code --blob-store s3} on s3proxy on loopback ({@link S3TestServer#onDisk},
 * objects on the same disk) uploading, stopped, then a fresh one restoring from the same bucket.
 * The store's files were just written, so restores read them from the page cache on both.
 */
final class BlobRestore implements Scenario {
    /** The sandbox: 1 GiB resident. */
    static final long MEMORY = 1L << 30;
    private static final double MIB = 1 << 20;
    private static final String READY = "/root/.bench-allocated";
    private static final String DIGEST = "/root/.bench-digest";
    private static final String ASK = "/root/.bench-ask";
    private static final String ANSWER = "/root/.bench-answer";
    /** What each instance keeps of a process's output: the service's default. */
    private static final long OUTPUT_LIMIT = 64L << 20;
    /** Instances that only restore: no sandboxes started ahead, no base template unpacked in the background. */
    private static final List<String> RESTORE_ONLY = List.of("--warm-pool", "0", "--no-slow-templates");

    @Override
    public String name() {
        return "blob-restore";
    }

    /** A durable memory checkpoint just uploaded, and what the restored process must answer. */
    private record Upload(String checkpointId, long memoryBytes, long logicalBytes, long storedBytes, long imageBytes, long residentBytes,
                          double ms, String digest) {
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        long bytes = Math.min(MEMORY, context.maxSize());
        var main = context.service();
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("memoryBytes", bytes);
        details.put("allocation", "python3 in a base sandbox (memoryMb " + HibernateResume.MEMORY_LIMIT_MB + ") holding os.urandom(size)");
        if (bytes < MEMORY)
            details.put("smallMemory", "quick run: " + (bytes >> 20) + " MiB instead of " + (MEMORY >> 20) + " MiB (--max-size)");
        context.progress().say("blob-restore: %d MiB held, made durable, restored on a fresh instance%s", bytes >> 20,
                bytes < MEMORY ? " (small: a quick run)" : "");
        var figures = new ArrayList<Figure>();
        Path work = Files.createTempDirectory(main.dataDir(), "bench-blob-restore-");
        try {
            Upload local = upload(context, "local", main, bytes, details);
            figures.addAll(uploadFigures("local", local));
            double[] localRestores = restore(context, "local", List.of("--blob-dir", main.defaultBlobDir().toString()), local, figures, details);
            double[] s3Restores;
            try (var s3 = S3TestServer.onDisk(Files.createDirectories(work.resolve("s3")))) {
                var bucket = s3.newBucket();
                Path credentials = work.resolve("s3-credentials");
                Files.createFile(credentials, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
                Files.writeString(credentials, s3.credentials().accessKeyId() + "\n" + s3.credentials().secretAccessKey() + "\n");
                var flags = List.of("--blob-store", "s3", "--s3-endpoint", s3.endpoint().toString(), "--s3-bucket", bucket,
                        "--s3-credentials-file", credentials.toString());
                Upload remote;
                try (var source = new Instance(context, "s3 source", concat(List.of("--warm-pool", "0"), flags))) {
                    source.service().awaitTemplates(List.of("base"), context.progress());
                    remote = upload(context, "s3", source.service(), bytes, details);
                }
                figures.addAll(uploadFigures("s3", remote));
                s3Restores = restore(context, "s3", flags, remote, figures, details);
            }
            double ratio = Stats.of(s3Restores).p50() / Stats.of(localRestores).p50();
            figures.add(Figure.of("blob.durable.restore.s3-vs-local", name(), "x",
                    "p50 of the restore from S3 over p50 of the restore from the local store", Stats.single(ratio)));
        } finally {
            PrivateService.deleteTree(work);
        }
        return new ScenarioResult(figures, details);
    }

    private Upload upload(BenchContext context, String backend, PrivateService source, long bytes, Map<String, Object> details) {
        Sandbox sandbox = source.create(CreateSandboxRequest.builder().template("base").memoryMb(HibernateResume.MEMORY_LIMIT_MB).build());
        try {
            HibernateResume.requireSuccess(sandbox.exec("sh", "-c", holdAndAnswer(bytes)), "start the allocation");
            HibernateResume.requireSuccess(sandbox.exec("sh", "-c", HibernateResume.awaitAllocated()), "wait for the allocation");
            String digest = HibernateResume.requireSuccess(sandbox.exec("cat", DIGEST), "read the digest").stdout().strip();
            long resident = HibernateResume.requireResident(sandbox.id(), bytes);
            context.progress().say("blob-restore %s: %d MiB resident; durable memory checkpoint", backend, resident >> 20);
            long start = System.nanoTime();
            Checkpoint checkpoint = sandbox.checkpoint(CheckpointRequest.builder().memory(true).durable(true).build());
            double ms = Format.millis(System.nanoTime() - start);
            if (!checkpoint.durable() || checkpoint.logicalBytes() == null || checkpoint.storedBytes() == null)
                throw new IllegalStateException("checkpoint " + checkpoint.id() + " came back without being durable: " + checkpoint);
            var upload = new Upload(checkpoint.id(), bytes, checkpoint.logicalBytes(), checkpoint.storedBytes(), checkpoint.sizeBytes(), resident, ms,
                    digest);
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("checkpoint", upload.checkpointId());
            d.put("residentBytes", resident);
            d.put("imageBytes", upload.imageBytes());
            d.put("logicalBytes", upload.logicalBytes());
            d.put("storedBytes", upload.storedBytes());
            d.put("uploadMs", Math.round(ms));
            details.put(backend + "Upload", d);
            context.progress().say("blob-restore %s: durable in %.1f s (%d MiB sent, %d MiB stored)", backend, ms / 1000,
                    upload.logicalBytes() >> 20, upload.storedBytes() >> 20);
            return upload;
        } finally {
            sandbox.delete();
        }
    }

    private List<Figure> uploadFigures(String backend, Upload upload) {
        String what = "a base sandbox holding " + (upload.residentBytes() >> 20) + " MiB resident";
        return List.of(
                Figure.of("blob.durable.upload." + backend + ".ms", name(), "ms",
                        "POST .../checkpoints {memory: true, durable: true} of " + what + " until it returns (dump, root stream and image "
                                + "into the " + backend + " store)", Stats.single(upload.ms())),
                Figure.of("blob.durable.upload." + backend + ".mbps", name(), "MiB/s",
                        "that checkpoint's logicalBytes (root stream and image) / the call's time", Stats.single(upload.logicalBytes() / MIB
                                / (upload.ms() / 1000))));
    }

    /** Restores on a fresh instance sharing the store; returns the samples of the whole restore, ms. */
    private double[] restore(BenchContext context, String backend, List<String> storeFlags, Upload upload, List<Figure> figures,
                             Map<String, Object> details) throws Exception {
        int n = context.counts().blob();
        double[] calls = new double[n];
        double[] resident = new double[n];
        double[] restores;
        try (var fresh = new Instance(context, backend + " restore", concat(RESTORE_ONLY, storeFlags))) {
            restores = context.sampler().run("restore on a fresh instance from " + backend, 0, n, i -> {
                long start = System.nanoTime();
                Sandbox restored = fresh.service().create(CreateSandboxRequest.fromCheckpoint(upload.checkpointId(), null));
                long created = System.nanoTime();
                try {
                    ExecResult answer = restored.exec("sh", "-c", ask());
                    long end = System.nanoTime();
                    HibernateResume.requireSuccess(answer, "ask the restored process");
                    if (!answer.stdout().strip().equals(upload.digest()))
                        throw new IllegalStateException("the restored process answered " + answer.stdout().strip() + ", expected "
                                + upload.digest());
                    calls[i] = Format.millis(created - start);
                    resident[i] = HibernateResume.requireResident(restored.id(), upload.memoryBytes()) / MIB;
                    return Format.millis(end - start);
                } finally {
                    restored.delete();
                }
            });
        }
        String from = "a fresh instance (its own data directory, sharing only the " + backend + " store)";
        double[] mbps = new double[n];
        for (int i = 0; i < n; i++) mbps[i] = upload.logicalBytes() / MIB / (restores[i] / 1000);
        figures.add(Figure.of("blob.durable.restore." + backend + ".ms", name(), "ms",
                "POST /v1/sandboxes {fromCheckpoint} on " + from + " until an exec has the restored process's answer, read from its "
                        + "memory", Stats.of(restores)));
        figures.add(Figure.of("blob.durable.restore." + backend + ".mbps", name(), "MiB/s",
                "the checkpoint's logicalBytes / that time", Stats.of(mbps)));
        figures.add(Figure.of("blob.durable.restore-call." + backend + ".ms", name(), "ms",
                "the POST /v1/sandboxes {fromCheckpoint} alone (received, imported, restored, init answering)", Stats.of(calls)));
        details.put(backend + "RestoredResidentMib", Stats.of(resident).p50());
        return restores;
    }

    /**
     * Another service for the length of a try block, closed (sandboxes deleted, pool unmounted,
     * data directory removed, host checked) at its end; the benchmark's own service closes it if
     * the run is interrupted first.
     */
    private static final class Instance implements AutoCloseable {
        private final PrivateService main;
        private final PrivateService service;

        Instance(BenchContext context, String role, List<String> flags) throws IOException {
            context.progress().say("blob-restore: starting the %s instance", role);
            this.main = context.service();
            this.service = PrivateService.start(context.progress(), OUTPUT_LIMIT, flags);
            main.attach(service);
        }

        PrivateService service() {
            return service;
        }

        @Override
        public void close() {
            try {
                service.close();
            } finally {
                main.detach(service);
            }
        }
    }

    /**
     * A python3 holding {@code bytes} random bytes, which writes the digest of one byte of every
     * page to {@link #DIGEST} before it signals it is ready, and again to {@link #ANSWER} each time
     * {@link #ASK} appears (checked every 5 ms).
     */
    static String holdAndAnswer(long bytes) {
        String script = String.join("\n",
                "import hashlib, os, time",
                "b = os.urandom(" + bytes + ")",
                "def answer(path):",
                "    with open(path + '.tmp', 'w') as f: f.write(hashlib.sha256(b[::4096]).hexdigest())",
                "    os.rename(path + '.tmp', path)",
                "answer('" + DIGEST + "')",
                "open('" + READY + "', 'w').close()",
                "while True:",
                "    if os.path.exists('" + ASK + "'):",
                "        os.remove('" + ASK + "')",
                "        answer('" + ANSWER + "')",
                "    time.sleep(0.005)");
        return "python3 -c \"" + script + "\" >/dev/null 2>&1 &";
    }

    /** Asks the python3 of {@link #holdAndAnswer} to read its memory, and prints its answer (fails after 60 s). */
    private static String ask() {
        return "rm -f " + ANSWER + "; touch " + ASK + "; i=0; while [ ! -e " + ANSWER + " ]; do i=$((i+1)); "
                + "if [ $i -gt 12000 ]; then exit 1; fi; sleep 0.005; done; cat " + ANSWER;
    }

    private static List<String> concat(List<String> a, List<String> b) {
        var all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
