package io.stasis.core.checkpoint;

import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.checkpoint.CheckpointDescriptor.RootLayer;
import io.stasis.core.checkpoint.CheckpointUpload.State;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.journal.FaultPoints;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.lifecycle.HibernationSource;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.CheckpointArchive;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.RuntimeImages;
import io.stasis.core.tenant.TenantId;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies checkpoints to the durable store and brings them back, on this instance or another one
 * sharing the store.
 *
 * <p><b>Upload.</b> The root snapshot goes as a {@code btrfs send} stream, incremental to the
 * sandbox's previous durable checkpoint while that one's snapshot still exists here (full
 * otherwise); a memory checkpoint's process image follows as a second stream; then the
 * descriptor, last: it is what makes the checkpoint durable, and it names every stream of the
 * chain, so restoring needs nothing else. The catalog records the state before the first byte
 * ({@code pending}) and after the descriptor ({@code durable}): a crash in between leaves a
 * pending row, which {@link #resumeInterrupted} restarts at the next start (the streams are
 * content-addressed, so what reached the store before the crash is not sent again).
 *
 * <p><b>Background uploads</b> run on virtual threads, at most {@code concurrency} at once; a
 * {@link #sync} waits for one, or runs it if none is in flight.
 *
 * <p><b>Restore.</b> {@link #materialize} receives the chain's snapshots that are not here (oldest
 * first) and imports the image; the caller branches a sandbox from them and then
 * {@linkplain Materialized#close() removes} what was received.
 */
public final class DurableCheckpoints implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DurableCheckpoints.class);
    /** At most this many root streams in a chain; the next checkpoint sends a full one. */
    static final int MAX_CHAIN = 8;

    private final Catalog catalog;
    private final RootStore roots;
    private final RuntimeImages runtime;
    private final CheckpointArchive archive;
    private final Function<SandboxId, NetworkPolicy> policies;
    private final Function<SandboxId, List<SandboxBucket>> buckets;
    private final FaultPoints faults;
    private final Clock clock;
    private final Semaphore slots;
    /** Whether a checkpoint that did not ask to be durable is uploaded anyway, in the background. */
    private final boolean background;
    private final Map<CheckpointId, CompletableFuture<CheckpointUpload>> inFlight = new ConcurrentHashMap<>();

    public DurableCheckpoints(Catalog catalog, RootStore roots, RuntimeImages runtime, CheckpointArchive archive,
                              Function<SandboxId, NetworkPolicy> policies,
                              Function<SandboxId, List<SandboxBucket>> buckets,
                              FaultPoints faults, Clock clock, int concurrency, boolean background) {
        this.buckets = buckets;
        this.background = background;
        if (concurrency < 1) throw new IllegalArgumentException("upload concurrency must be at least 1, was " + concurrency);
        this.catalog = catalog;
        this.roots = roots;
        this.runtime = runtime;
        this.archive = archive;
        this.policies = policies;
        this.faults = faults;
        this.clock = clock;
        this.slots = new Semaphore(concurrency);
    }

    /** Where the checkpoint's upload stands; empty if none was asked for. */
    public Optional<CheckpointUpload> state(CheckpointId id) {
        return catalog.findUpload(id);
    }

    /**
     * Uploads now and returns once the checkpoint is durable.
     * <p>On failure: {@code runtime_failed} (the step's error); the catalog says {@code failed}.
     */
    public CheckpointUpload upload(Checkpoint checkpoint, Sandbox sandbox) {
        var mine = new CompletableFuture<CheckpointUpload>();
        var other = inFlight.putIfAbsent(checkpoint.id(), mine);
        if (other != null) return await(checkpoint.id(), other, Duration.ofDays(1)).orElseThrow();
        try {
            var done = run(checkpoint, sandbox);
            mine.complete(done);
            return done;
        } catch (RuntimeException e) {
            mine.completeExceptionally(e);
            throw e;
        } finally {
            inFlight.remove(checkpoint.id(), mine);
        }
    }

    /**
     * After a checkpoint that did not ask to be durable: its upload starts in the background,
     * unless uploads are on request only ({@code durable: true}, or {@link #sync}).
     */
    public void afterCheckpoint(Checkpoint checkpoint, Sandbox sandbox) {
        if (background) schedule(checkpoint, sandbox);
    }

    /** Records the upload as pending and starts it in the background; returns at once. */
    public void schedule(Checkpoint checkpoint, Sandbox sandbox) {
        catalog.recordUpload(CheckpointUpload.pending(checkpoint.id(), clock.instant()));
        var mine = new CompletableFuture<CheckpointUpload>();
        if (inFlight.putIfAbsent(checkpoint.id(), mine) != null) return;
        Thread.ofVirtual().name("upload-" + checkpoint.id().value()).start(() -> {
            try {
                slots.acquire();
                try {
                    mine.complete(run(checkpoint, sandbox));
                } finally {
                    slots.release();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                mine.completeExceptionally(e);
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("checkpoint", checkpoint.id()).setCause(e).log("background upload failed");
                mine.completeExceptionally(e);
            } finally {
                inFlight.remove(checkpoint.id(), mine);
            }
        });
    }

    /**
     * Waits until the checkpoint is durable, at most {@code timeout}: joins the upload in flight,
     * or runs one if none is (never asked for, failed, or cut short by a crash). Returns the state
     * at the end: {@code durable}, or still {@code pending} when the time ran out.
     * <p>On failure: {@code runtime_failed} naming the step that failed.
     */
    public CheckpointUpload sync(Checkpoint checkpoint, Sandbox sandbox, Duration timeout) {
        var current = catalog.findUpload(checkpoint.id());
        if (current.isPresent() && current.get().durable()) return current.get();
        var running = inFlight.get(checkpoint.id());
        if (running == null) {
            schedule(checkpoint, sandbox);
            running = inFlight.get(checkpoint.id());
        }
        if (running != null) {
            var done = await(checkpoint.id(), running, timeout);
            if (done.isPresent()) return done.get();
        }
        return catalog.findUpload(checkpoint.id()).orElseGet(() -> CheckpointUpload.pending(checkpoint.id(), clock.instant()));
    }

    private Optional<CheckpointUpload> await(CheckpointId id, CompletableFuture<CheckpointUpload> future, Duration timeout) {
        try {
            return Optional.of(future.get(timeout.toMillis(), TimeUnit.MILLISECONDS));
        } catch (TimeoutException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StasisException.runtimeFailed(null, "upload checkpoint", "interrupted while waiting for " + id, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof StasisException s) throw s;
            throw StasisException.runtimeFailed(null, "upload checkpoint", "upload of " + id + " failed: " + e.getCause(), e.getCause());
        }
    }

    /**
     * At start-up: restarts every upload a crash or a failure left unfinished whose checkpoint
     * still exists here, and forgets those whose checkpoint is gone. Returns how many restarted.
     */
    public int resumeInterrupted() {
        int restarted = 0;
        for (var upload : catalog.allUploads()) {
            if (upload.durable()) continue;
            var checkpoint = catalog.findCheckpoint(upload.checkpoint());
            var sandbox = checkpoint.flatMap(c -> catalog.find(c.sandboxId()));
            if (checkpoint.isEmpty() || sandbox.isEmpty() || !roots.hasSnapshot(upload.checkpoint())) {
                catalog.deleteUpload(upload.checkpoint());
                continue;
            }
            schedule(checkpoint.get(), sandbox.get());
            restarted++;
        }
        if (restarted > 0) log.atInfo().addKeyValue("uploads", restarted).log("restarted interrupted checkpoint uploads");
        return restarted;
    }

    /** The upload itself: streams, then the descriptor, then the catalog. */
    private CheckpointUpload run(Checkpoint checkpoint, Sandbox sandbox) {
        var id = checkpoint.id();
        long start = System.nanoTime();
        catalog.recordUpload(CheckpointUpload.pending(id, clock.instant()));
        try (var upload = archive.beginUpload()) {
            var parent = parentOf(checkpoint, upload);
            faults.reach("upload.before-root");
            var root = roots.sendSnapshot(id, parent.map(CheckpointDescriptor::checkpoint), upload::put);
            faults.reach("upload.after-root");
            Optional<CheckpointArchive.Stored> image = checkpoint.memory()
                    ? Optional.of(runtime.exportImage(id, upload::put)) : Optional.empty();
            faults.reach("upload.after-image");
            var layers = new ArrayList<RootLayer>(parent.map(CheckpointDescriptor::roots).orElse(List.of()));
            layers.add(new RootLayer(id, parent.map(CheckpointDescriptor::checkpoint), root.id(), root.logicalBytes()));
            long logical = root.logicalBytes() + image.map(CheckpointArchive.Stored::logicalBytes).orElse(0L);
            long stored = root.storedBytes() + image.map(CheckpointArchive.Stored::storedBytes).orElse(0L);
            var descriptor = new CheckpointDescriptor(id, sandbox.tenant(), sandbox.id(), checkpoint.name(), checkpoint.memory(),
                    checkpoint.purpose(), checkpoint.createdAt(), sandbox.template(), sandbox.resources(), sandbox.env(), sandbox.metadata(),
                    sandbox.lifecycle(), policies.apply(sandbox.id()), layers, image.map(CheckpointArchive.Stored::id), logical, stored,
                    buckets.apply(sandbox.id()), checkpoint.runtime());
            String digest = upload.putDescriptor(descriptor);
            faults.reach("upload.after-descriptor");
            var done = new CheckpointUpload(id, State.DURABLE, parent.map(CheckpointDescriptor::checkpoint), Optional.of(root.id()),
                    image.map(CheckpointArchive.Stored::id), logical, stored, Optional.empty(), clock.instant());
            catalog.recordUpload(done);
            catalog.recordDurableImage(sandbox.id(), new DurableImage(id, digest, checkpoint.createdAt()));
            log.atInfo().addKeyValue("checkpoint", id).addKeyValue("sandbox", sandbox.id())
                    .addKeyValue("parent", parent.map(p -> p.checkpoint().value()).orElse("none"))
                    .addKeyValue("logicalBytes", logical).addKeyValue("storedBytes", stored)
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("checkpoint durable");
            return done;
        } catch (RuntimeException e) {
            if (catalog.findCheckpoint(id).isPresent())
                catalog.recordUpload(new CheckpointUpload(id, State.FAILED, Optional.empty(), Optional.empty(), Optional.empty(), 0, 0,
                        Optional.of(String.valueOf(e.getMessage())), clock.instant()));
            else catalog.deleteUpload(id);
            throw e;
        }
    }

    /**
     * The newest earlier durable checkpoint of the same sandbox whose snapshot is still here and
     * whose descriptor can be read: the new root stream is incremental to it. Its chain's streams
     * are kept by {@code session}, since the new descriptor names them again; a chain that is gone
     * from the store (its checkpoint deleted and collected meanwhile) is no parent.
     */
    private Optional<CheckpointDescriptor> parentOf(Checkpoint checkpoint, CheckpointArchive.Upload session) {
        var earlier = catalog.checkpointsOf(checkpoint.sandboxId()).stream()
                .filter(c -> !c.id().equals(checkpoint.id()) && c.createdAt().compareTo(checkpoint.createdAt()) <= 0)
                .sorted(Comparator.comparing(Checkpoint::createdAt).reversed())
                .toList();
        for (var candidate : earlier) {
            var upload = catalog.findUpload(candidate.id());
            if (upload.isEmpty() || !upload.get().durable() || !roots.hasSnapshot(candidate.id())) continue;
            try {
                var descriptor = archive.descriptor(candidate.id());
                // A long chain makes every restore receive all of it: start a new one with a full stream.
                if (descriptor.isPresent() && descriptor.get().roots().size() < MAX_CHAIN) {
                    for (var layer : descriptor.get().roots()) session.keep(layer.stream());
                    return descriptor;
                }
                if (descriptor.isPresent()) return Optional.empty();
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("checkpoint", candidate.id()).setCause(e).log("descriptor unreadable or its streams gone; not used as a parent");
            }
        }
        return Optional.empty();
    }

    /** The descriptor of a durable checkpoint visible to {@code tenant}; {@code checkpoint_not_found} otherwise. */
    public CheckpointDescriptor descriptor(TenantId tenant, CheckpointId id) {
        return archive.descriptor(id).filter(d -> d.tenant().equals(tenant))
                .orElseThrow(() -> CheckpointService.notFound(id.value()));
    }

    /**
     * Makes a durable checkpoint's root snapshot and image exist here, receiving what is missing.
     * Close the result to remove what was received (roots branched from it stay).
     */
    public Materialized materialize(CheckpointDescriptor descriptor) {
        var received = new ArrayList<CheckpointId>();
        boolean imported = false;
        long start = System.nanoTime();
        try {
            for (var layer : descriptor.roots()) {
                if (roots.hasSnapshot(layer.checkpoint())) continue;
                try (var stream = archive.open(layer.stream())) {
                    roots.receiveSnapshot(layer.checkpoint(), stream);
                } catch (IOException e) {
                    throw StasisException.runtimeFailed(null, "receive root snapshot", e.toString(), e);
                }
                received.add(layer.checkpoint());
            }
            if (descriptor.image().isPresent() && runtime.imageSize(descriptor.checkpoint()).isEmpty()) {
                try (var stream = archive.open(descriptor.image().get())) {
                    runtime.importImage(descriptor.checkpoint(), stream);
                } catch (IOException e) {
                    throw StasisException.runtimeFailed(null, "import image", e.toString(), e);
                }
                imported = true;
            }
        } catch (RuntimeException e) {
            new Materialized(descriptor, received, imported).closeInto(e);
            throw e;
        }
        log.atInfo().addKeyValue("checkpoint", descriptor.checkpoint()).addKeyValue("layersReceived", received.size())
                .addKeyValue("imageImported", imported).addKeyValue("ms", (System.nanoTime() - start) / 1_000_000)
                .log("durable checkpoint materialized");
        return new Materialized(descriptor, received, imported);
    }

    /**
     * Makes the hibernation image of a sandbox adopted from a lost node present here, from its
     * durable copy, and the sandbox's root from the image's snapshot if it has none yet (a root
     * outlives the fetch; close the result once the restore is done). {@code checkpoint_not_found}
     * when the store has no such copy of the sandbox's tenant.
     */
    public HibernationSource.Fetched fetchHibernation(Sandbox sandbox, CheckpointId image) {
        var materialized = materialize(descriptor(sandbox.tenant(), image));
        try {
            if (roots.root(sandbox.id()).isEmpty()) roots.createRootFrom(sandbox.id(), image, sandbox.resources().diskBytes());
            return materialized::close;
        } catch (RuntimeException e) {
            materialized.closeInto(e);
            throw e;
        }
    }

    /** A durable checkpoint made present here; closing removes the snapshots and image that were fetched for it. */
    public final class Materialized implements AutoCloseable {
        private final CheckpointDescriptor descriptor;
        private final List<CheckpointId> received;
        private final boolean imported;

        private Materialized(CheckpointDescriptor descriptor, List<CheckpointId> received, boolean imported) {
            this.descriptor = descriptor;
            this.received = List.copyOf(received);
            this.imported = imported;
        }

        public CheckpointDescriptor descriptor() {
            return descriptor;
        }

        @Override
        public void close() {
            var failure = new StasisException(ErrorCode.INTERNAL, "cleanup after restoring " + descriptor.checkpoint() + " failed", Map.of());
            closeInto(failure);
            if (failure.getSuppressed().length > 0) throw failure;
        }

        private void closeInto(RuntimeException failure) {
            if (imported) {
                try {
                    runtime.deleteImage(descriptor.checkpoint());
                } catch (RuntimeException e) {
                    failure.addSuppressed(e);
                }
            }
            for (var id : received.reversed()) {
                try {
                    roots.deleteSnapshot(id);
                } catch (RuntimeException e) {
                    failure.addSuppressed(e);
                }
            }
        }
    }

    /**
     * Waits up to {@code CLOSE_WAIT} for uploads in flight (a send holds the pool busy), so the
     * service stops with no tool running; one still running after that is left to the reconciler
     * of the next start (its row says pending).
     */
    @Override
    public void close() {
        long deadline = System.nanoTime() + CLOSE_WAIT.toNanos();
        for (var future : List.copyOf(inFlight.values())) {
            long left = deadline - System.nanoTime();
            try {
                future.get(Math.max(0, left), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException e) {
                // failed: recorded as such; still running: resumed at the next start
            }
        }
    }

    /** Waits for an upload of this checkpoint in flight to end, whatever its outcome (before its snapshot is deleted). */
    public void settle(CheckpointId id) {
        var future = inFlight.get(id);
        if (future == null) return;
        try {
            future.get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // its outcome does not matter: the checkpoint goes
        }
    }

    private static final Duration CLOSE_WAIT = Duration.ofSeconds(60);

    /** The tenant's durable checkpoints in the store, written by any instance, oldest first. */
    public List<CheckpointDescriptor> stored(TenantId tenant) {
        return archive.descriptors().stream().filter(d -> d.tenant().equals(tenant))
                .sorted(Comparator.comparing(CheckpointDescriptor::createdAt).thenComparing(d -> d.checkpoint().value())).toList();
    }

    /**
     * Removes a durable copy that only the store holds (its sandbox was deleted here, or another
     * instance made it): its descriptor goes, so no instance can restore it, and the next garbage
     * collection frees what no other descriptor names. {@code checkpoint_not_found} if it is not
     * {@code tenant}'s.
     */
    public void deleteStored(TenantId tenant, CheckpointId id) {
        var descriptor = descriptor(tenant, id);
        catalog.deleteUpload(id);
        archive.deleteDescriptor(id);
        log.atInfo().addKeyValue("checkpoint", id).addKeyValue("sandbox", descriptor.sandbox()).log("durable copy deleted from the store");
    }

    /** Forgets a deleted checkpoint's upload and removes its descriptor (it is no longer restorable anywhere). */
    public void forget(CheckpointId id) {
        catalog.deleteUpload(id);
        archive.deleteDescriptor(id);
    }
}
