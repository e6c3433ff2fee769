package io.stasis.blob.content;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BlobInfo;
import io.stasis.core.spi.BlobStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Coordination between the processes ("holders") that share one backend, through lock objects in
 * the backend itself, restic-style. It needs nothing of the backend but what the {@link BlobStore}
 * SPI promises: a put is atomic and, once it returns, visible to every later list
 * (read-after-write, as S3 gives since 2020).
 *
 * <p><b>Objects</b>: {@code locks/<holder>/<nonce>-shared} while the holder has uploads in flight
 * (one object for all of them), {@code locks/<holder>/<nonce>-exclusive} while it collects. A
 * holder rewrites its object every {@link LockTiming#refreshEvery()}; an object whose
 * last-modified time is more than {@link LockTiming#staleAfter()} before that of an object just
 * written (both stamped by the backend's clock, so host clocks do not matter) is stale: its holder
 * is gone, and it is ignored.
 *
 * <p><b>The rule</b>, for two holders A (uploading) and G (collecting):
 * <ol>
 *   <li>A writes its shared object, then lists {@code locks/}; while a fresh exclusive object of
 *       another holder is there, A waits (keeping its own object fresh) and lists again.</li>
 *   <li>G writes its exclusive object, then lists {@code locks/}; if a fresh object of another
 *       holder, of either kind, is there, G deletes its object and does not collect
 *       ({@code store_busy}, naming the holders).</li>
 * </ol>
 * <em>Why it is safe</em>: both write, then list. Writes and lists are linearizable, so either
 * A's write comes before G's list, and G sees it and backs off; or G's list comes before A's
 * write, so G's write came before A's list too, and A sees G's object and waits. Both may back
 * off, never both proceed. After that, each keeps its object fresh for as long as it acts. An
 * upload that waits keeps its object, so collections that begin after it back off: uploads wait
 * only for the collection already running, and a collection runs when no upload is in flight.
 *
 * <p><b>Leases lapse</b>: a holder trusts its object for {@link LockTiming#trustFor()} (half of
 * {@code staleAfter}) after the last refresh <em>began</em>, measured by its own monotonic clock.
 * Every step that depends on the lock (an upload's manifest, a descriptor, each GC delete) checks
 * the lease first and fails if it lapsed (a paused process, a backend unreachable for
 * minutes): by then another holder may have called the object stale. What is not covered: one
 * backend call that stays in flight for longer than {@code staleAfter/2} after its check.
 *
 * <p><b>Crashes</b>: a dead holder's object goes stale after {@code staleAfter} and stops
 * blocking anyone (the next collection removes it); a restarted holder with the same id removes
 * its own objects at once ({@link #clearOwn()}). Holder ids must therefore be unique per process sharing the store and
 * stable across its restarts (the service uses one per data directory).
 *
 * <p>Within one process, uploads and the GC meet through {@link Pins} instead: a holder ignores
 * its own objects, so its uploads never wait for its own GC.
 */
public final class StoreLocks {
    private static final Logger log = LoggerFactory.getLogger(StoreLocks.class);
    static final String PREFIX = "locks/";
    private static final Pattern HOLDER = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_-]{0,63}");

    /** What a lock object is for. */
    public enum Kind {
        SHARED, EXCLUSIVE;

        String suffix() {
            return "-" + name().toLowerCase();
        }

        static Optional<Kind> ofKey(String key) {
            for (Kind k : values()) if (key.endsWith(k.suffix())) return Optional.of(k);
            return Optional.empty();
        }
    }

    /**
     * A lock object as listed.
     *
     * @param stale whether it was last written more than {@code staleAfter} ago (in a listing, by
     *              this host's clock: for display; the protocol itself compares backend times)
     */
    public record LockInfo(String key, String holder, Kind kind, Instant lastModified, boolean stale) {
    }

    private final BlobStore store;
    private final String holder;
    private final LockTiming timing;
    private final Retrier retrier;
    private final LongSupplier ticker;
    private final Clock clock;
    private final ReentrantLock establishing = new ReentrantLock();
    private Lease shared; // guarded by this

    StoreLocks(BlobStore store, String holder, LockTiming timing, Retrier retrier, LongSupplier ticker, Clock clock) {
        this.clock = clock;
        if (holder == null || !HOLDER.matcher(holder).matches())
            throw new IllegalArgumentException("holder must be 1-64 of [A-Za-z0-9_-], not starting with '-', was '" + holder + "'");
        this.store = store;
        this.holder = holder;
        this.timing = timing;
        this.retrier = retrier;
        this.ticker = ticker;
    }

    String holder() {
        return holder;
    }

    /**
     * Removes this holder's lock objects: those of an earlier run of it that died. Call once
     * before the first use, when no upload or collection of this holder runs.
     */
    void clearOwn() {
        var own = store.listAll(PREFIX + holder + "/").map(BlobInfo::key).toList();
        for (String key : own) retrier.run("clear own lock", key, a -> { }, () -> store.delete(key));
        if (!own.isEmpty()) log.atInfo().addKeyValue("holder", holder).addKeyValue("objects", own.size()).log("removed own lock objects of an earlier run");
    }

    /**
     * Joins this holder's shared lock, writing it first if no upload holds it now.
     * <p>Waits, up to {@link LockTiming#maxWait()}, while another holder's fresh exclusive lock
     * exists; then {@code store_busy}. Release the lease when the upload ends.
     */
    Lease acquireShared() {
        long deadline = ticker.getAsLong() + timing.maxWait().toNanos();
        establishing.lock();
        try {
            synchronized (this) {
                if (shared != null && shared.trusted()) {
                    shared.users++;
                    return shared;
                }
            }
            // The object stays (refreshed) while this waits: collections that begin meanwhile back off, so
            // uploads wait for at most the collections already running, never starve behind new ones.
            var lease = write(Kind.SHARED);
            lease.users = 1;
            lease.startRefreshing();
            long pause = 50;
            boolean logged = false;
            while (true) {
                List<LockInfo> blockers;
                try {
                    blockers = blockers(lease, Kind.EXCLUSIVE);
                    if (!blockers.isEmpty() && ticker.getAsLong() - deadline > 0)
                        throw busy("uploads waited " + timing.maxWait() + " for a collection to end", blockers);
                    lease.ensureHeld("start an upload");
                } catch (RuntimeException e) {
                    lease.release();
                    throw e;
                }
                if (blockers.isEmpty()) {
                    synchronized (this) {
                        shared = lease;
                    }
                    return lease;
                }
                if (!logged) {
                    log.atInfo().addKeyValue("holders", holders(blockers)).log("upload waits: another instance collects garbage in the blob store");
                    logged = true;
                }
                try {
                    pause(pause);
                } catch (RuntimeException e) {
                    lease.release();
                    throw e;
                }
                pause = Math.min(pause * 2, 2000);
            }
        } finally {
            establishing.unlock();
        }
    }

    /**
     * Takes the exclusive lock for a collection, or {@code store_busy} (and nothing held) if
     * another holder has a fresh lock of either kind.
     */
    Lease acquireExclusive() {
        var lease = write(Kind.EXCLUSIVE);
        List<LockInfo> others;
        try {
            others = others(lease);
        } catch (RuntimeException e) {
            deleteQuietly(lease.key);
            throw e;
        }
        var blockers = others.stream().filter(l -> !l.stale()).toList();
        if (!blockers.isEmpty()) {
            deleteQuietly(lease.key);
            throw busy("another instance is uploading to or collecting in the blob store", blockers);
        }
        lease.users = 1;
        lease.startRefreshing();
        // Stale objects belong to holders that are gone (or whose lease lapsed: they act no more
        // under it): removing them keeps the listing short and the status honest.
        for (var stale : others) {
            deleteQuietly(stale.key());
            log.atInfo().addKeyValue("holder", stale.holder()).addKeyValue("kind", stale.kind().name().toLowerCase())
                    .addKeyValue("lastModified", stale.lastModified()).log("removed a stale lock object of another instance");
        }
        return lease;
    }

    /** Every lock object in the store, by any holder, each marked stale or fresh. */
    public List<LockInfo> list() {
        var all = new ArrayList<LockInfo>();
        Instant now = clock.instant();
        for (var info : retrier.call("list locks", PREFIX, a -> { }, () -> store.listAll(PREFIX).toList())) parse(info, now).ifPresent(all::add);
        return all;
    }

    /** The fresh lock objects of other holders, of {@code kind} (null: any), against {@code own}'s write time. */
    private List<LockInfo> blockers(Lease own, Kind kind) {
        return others(own).stream().filter(l -> !l.stale() && (kind == null || l.kind() == kind)).toList();
    }

    /** Every lock object of another holder, each judged stale or fresh against {@code own}'s write time. */
    private List<LockInfo> others(Lease own) {
        Instant now = retrier.call("head lock", own.key, a -> { }, () -> store.head(own.key))
                .orElseThrow(() -> new StasisException(ErrorCode.RUNTIME_FAILED, "lock object " + own.key + " vanished right after it was written",
                        Map.of("key", own.key))).lastModified();
        var out = new ArrayList<LockInfo>();
        for (var info : retrier.call("list locks", PREFIX, a -> { }, () -> store.listAll(PREFIX).toList())) {
            var lock = parse(info, now);
            if (lock.isPresent() && !lock.get().holder().equals(holder)) out.add(lock.get());
        }
        return out;
    }

    private Optional<LockInfo> parse(BlobInfo info, Instant now) {
        String rest = info.key().substring(PREFIX.length());
        int slash = rest.indexOf('/');
        if (slash < 0) return Optional.empty();
        return Kind.ofKey(rest).map(kind -> new LockInfo(info.key(), rest.substring(0, slash), kind, info.lastModified(),
                info.lastModified().isBefore(now.minus(timing.staleAfter()))));
    }

    private Lease write(Kind kind) {
        var lease = new Lease(PREFIX + holder + "/" + UUID.randomUUID().toString().replace("-", "") + kind.suffix(), kind);
        lease.refresh();
        return lease;
    }

    private byte[] content(Kind kind) {
        var lines = new LinkedHashMap<String, String>();
        lines.put("holder", holder);
        lines.put("kind", kind.name().toLowerCase());
        lines.put("pid", Long.toString(ProcessHandle.current().pid()));
        lines.put("written", Instant.now().toString());
        var out = new StringBuilder();
        lines.forEach((k, v) -> out.append(k).append('=').append(v).append('\n'));
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    private void deleteQuietly(String key) {
        try {
            retrier.run("delete lock", key, a -> { }, () -> store.delete(key));
        } catch (RuntimeException e) {
            log.atWarn().addKeyValue("key", key).setCause(e).log("could not remove a lock object; it goes stale");
        }
    }

    private StasisException busy(String why, List<LockInfo> blockers) {
        var details = new LinkedHashMap<String, Object>();
        details.put("holders", holders(blockers));
        details.put("kinds", blockers.stream().map(b -> b.kind().name().toLowerCase()).distinct().toList());
        details.put("staleAfter", timing.staleAfter().toString());
        return new StasisException(ErrorCode.STORE_BUSY, why + " (holders " + holders(blockers) + "); try again later, or after "
                + timing.staleAfter() + " if they are gone", details);
    }

    private static List<String> holders(List<LockInfo> locks) {
        return locks.stream().map(LockInfo::holder).distinct().toList();
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(Math.max(1, millis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ContentErrors.interrupted("wait for the store lock", PREFIX);
        }
    }

    /** One lock object this holder keeps fresh while it is used. */
    final class Lease {
        private final String key;
        private final Kind kind;
        private volatile long trustedUntil;
        private volatile boolean ended;
        private int users; // guarded by StoreLocks.this
        private Thread refresher;
        /** A refresh and the final delete never overlap, so no object is rewritten after it was removed. */
        private final ReentrantLock writing = new ReentrantLock();

        private Lease(String key, Kind kind) {
            this.key = key;
            this.kind = kind;
        }

        String key() {
            return key;
        }

        /** Rewrites the object; trusted for {@code trustFor} from before the write began. */
        private void refresh() {
            long began = ticker.getAsLong();
            retrier.run("write lock", key, a -> { }, () -> store.put(key, content(kind)));
            trustedUntil = began + timing.trustFor().toNanos();
        }

        private boolean trusted() {
            return !ended && ticker.getAsLong() - trustedUntil < 0;
        }

        /**
         * Throws {@code runtime_failed} unless the lock has been fresh without a gap since it was
         * taken: run right before each step that relies on it.
         */
        void ensureHeld(String step) {
            if (trusted()) return;
            ended = true;
            synchronized (StoreLocks.this) {
                if (shared == this) shared = null;
            }
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "the blob store " + kind.name().toLowerCase() + " lock " + key
                    + " lapsed (not refreshed for " + timing.trustFor() + ") before " + step + "; another instance may have collected meanwhile",
                    Map.of("key", key, "step", step));
        }

        private void startRefreshing() {
            refresher = Thread.ofVirtual().name("store-lock-" + kind.name().toLowerCase()).start(() -> {
                while (!ended) {
                    try {
                        Thread.sleep(timing.refreshEvery());
                    } catch (InterruptedException e) {
                        return;
                    }
                    writing.lock();
                    try {
                        if (ended || !trusted()) return; // released, or lapsed: every step that relies on it now fails
                        refresh();
                    } catch (RuntimeException e) {
                        log.atWarn().addKeyValue("key", key).setCause(e).log("lock refresh failed; retrying at the next interval");
                    } finally {
                        writing.unlock();
                    }
                }
            });
        }

        /** Drops one user; the last one removes the object. */
        void release() {
            synchronized (StoreLocks.this) {
                if (--users > 0) return;
                if (shared == this) shared = null;
                ended = true;
            }
            if (refresher != null) refresher.interrupt();
            writing.lock();
            try {
                deleteQuietly(key);
            } finally {
                writing.unlock();
            }
        }
    }
}
