package io.stasis.blob.content.archive;

import io.stasis.blob.content.ContentStore;
import io.stasis.blob.content.GcReport;
import io.stasis.blob.content.StoreLocks;
import io.stasis.blob.content.StoreUsage;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.journal.FaultPoints;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Garbage collection of the blob store, as the service runs it: every {@code --blob-gc-interval}
 * and on demand ({@code POST /v1/blobs/gc}).
 *
 * <p><b>The live set comes from the store itself</b>, not from this instance's catalog, since
 * instances sharing the store each know only their own checkpoints: every stream named by every
 * checkpoint descriptor ({@code checkpoints/<id>.json}: each root layer of its chain, and its
 * image) and by every volume sync record ({@code volumes/volume-syncs/<vsync>}: its chain). A
 * descriptor or record that cannot be read stops the collection before anything is deleted: it is
 * better to keep garbage than to lose a stream. The content store asks for the live set only once
 * it holds the store's exclusive lock, so no other instance writes a record meanwhile.
 */
public final class BlobGc implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BlobGc.class);

    /** The last collection that ran, and when it ended. */
    public record Outcome(GcReport report, Instant finishedAt) {
    }

    /** What the store holds and who holds its locks. */
    public record Status(String holder, StoreUsage usage, List<StoreLocks.LockInfo> locks, Optional<Outcome> lastGc,
                         Optional<Duration> interval) {
    }

    private final ContentStore content;
    private final BlobCheckpointArchive checkpoints;
    private final ContentVolumeArchive volumes;
    private final Optional<Duration> interval;
    private final FaultPoints faults;
    private final Clock clock;
    private final String holder;
    private volatile Outcome last;
    private volatile Thread thread;
    private volatile boolean closed;

    public BlobGc(ContentStore content, String holder, BlobCheckpointArchive checkpoints, ContentVolumeArchive volumes,
                  Optional<Duration> interval, FaultPoints faults, Clock clock) {
        this.content = content;
        this.holder = holder;
        this.checkpoints = checkpoints;
        this.volumes = volumes;
        this.interval = interval;
        this.faults = faults;
        this.clock = clock;
    }

    /**
     * This instance's name in the store's lock objects: made once per data directory and kept in
     * {@code <data-dir>/blob-holder}, so that a restart recognizes (and removes) the locks its
     * crashed run left. The host name is in it for whoever reads a {@code store_busy}.
     */
    public static String holder(Path dataDir) {
        Path file = dataDir.resolve("blob-holder");
        try {
            if (Files.exists(file)) return Files.readString(file, StandardCharsets.US_ASCII).strip();
            byte[] random = new byte[6];
            new SecureRandom().nextBytes(random);
            String id = hostName() + "-" + HexFormat.of().formatHex(random);
            Path tmp = dataDir.resolve("blob-holder.tmp");
            Files.writeString(tmp, id + "\n", StandardCharsets.US_ASCII);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
            return id;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or make " + file + ": " + e.getMessage(), e);
        }
    }

    private static String hostName() {
        try {
            String name = InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9_-]", "-").replaceAll("^-+", "");
            return name.isEmpty() ? "host" : name.substring(0, Math.min(name.length(), 40));
        } catch (IOException e) {
            return "host";
        }
    }

    /** Starts the periodic collection, if an interval is set; the first runs one interval after start. */
    public void start() {
        if (interval.isEmpty()) return;
        thread = Thread.ofVirtual().name("blob-gc").start(() -> {
            while (!closed) {
                try {
                    Thread.sleep(interval.get());
                    collect();
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    if (e instanceof StasisException busy && busy.code() == ErrorCode.STORE_BUSY) // the next round will do
                        log.atInfo().addKeyValue("details", busy.details()).log("periodic blob gc skipped: " + busy.getMessage());
                    else log.atWarn().setCause(e).log("periodic blob gc failed");
                }
            }
        });
    }

    /**
     * One collection now.
     * <p>On failure: {@code store_busy} (409) when another instance uploads or collects, or a
     * collection already runs here; nothing was done. Otherwise the cause (an unreadable
     * descriptor or record, the backend); nothing a live stream needs was deleted.
     */
    public Outcome collect() {
        var outcome = new Outcome(content.gc(this::liveSet, faults::reach), clock.instant());
        last = outcome;
        return outcome;
    }

    /** Every stream a checkpoint descriptor or a volume sync record in the store names. */
    Set<ManifestId> liveSet() {
        var live = new HashSet<ManifestId>(checkpoints.liveStreams());
        live.addAll(volumes.liveStreams());
        faults.reach("gc.live-set");
        return live;
    }

    /** The store's usage (a listing of it), its locks and the last collection here. */
    public Status status() {
        return new Status(holder, content.usage(), content.locks(), Optional.ofNullable(last), interval);
    }

    @Override
    public void close() {
        closed = true;
        var running = thread;
        if (running != null) running.interrupt();
    }
}
