package io.stasis.core.spi;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Existing S3-compatible buckets as lazy POSIX filesystems on the host. A mount lists the bucket's
 * keys as files and directories, fetches only the byte ranges a reader asks for (nothing is copied
 * up front) and, unless read-only, uploads files written through it. The host path is then bound
 * into a sandbox; the FUSE daemon that serves it, and the bucket's credentials, stay on the host.
 *
 * <p><b>Ownership.</b> Every mount lives at {@code <mounts-dir>/<id>}, a directory the service owns
 * and nothing else writes to. After a crash {@link #listOwned()} finds every mount by its
 * directory, whatever state it was left in, so the caller can reconcile with the catalog: unmount
 * what no sandbox needs, mount again what one does.
 *
 * <p><b>Consistency.</b> Reads see the bucket as listed at most a few seconds ago (directory
 * listings are cached briefly; see the implementation for how long). A file written through the
 * mount is uploaded as a whole object after it is closed and has been left alone for the
 * implementation's write-back delay; until then other readers of the bucket see the old object
 * (or none). There is no locking between writers: the last upload wins. Files live in one object
 * each: a rename of a file is a copy and a delete, a rename of a directory renames every object
 * below it (not atomic).
 *
 * <p><b>Credentials</b> are never put on a command line, in a log or in a file another user can
 * read; see the implementation for where they go.
 */
public interface BucketMounts {

    /**
     * Mounts a bucket at {@code <mounts-dir>/<id>}.
     * <p>Prerequisites: no live mount has {@code spec.id()}. A leftover of the same id (see
     * {@link #listOwned()}: a dead mount, a bare directory) is allowed: it is cleaned first and
     * its pending uploads are kept and resumed.
     * <p>Effects on success: the bucket (or its prefix) is readable at
     * {@link MountedBucket#hostPath()} when this returns; writable unless
     * {@link BucketMount#readOnly()}. The mount and its daemon outlive the service: they go away
     * only with {@link #unmount}.
     * <p>On failure: {@code invalid_state} if the id is mounted already; {@code runtime_failed}
     * naming the mount and quoting the FUSE client's error (bad endpoint, refused credentials,
     * missing bucket...). No mount or daemon is left; the directory is removed unless it holds
     * uploads still pending from an earlier mount.
     */
    MountedBucket mount(BucketMount spec);

    /**
     * Unmounts {@code id} and removes its directory. Idempotent: an id with nothing left is a
     * no-op; a dead or half-made mount is cleaned the same way.
     * <p>Effects on success: with {@link Flush#WAIT}, every file written through the mount was
     * uploaded first. The mount is gone from the mount table (detached lazily if a process still
     * has a file open in it: that process keeps its file, and the daemon ends once it closes it),
     * the daemon has ended or will end with the last open file, and the directory is removed.
     * <p>On failure: {@code runtime_failed}. With {@link Flush#WAIT}, if uploads are still pending
     * when the implementation's flush timeout passes (e.g. the endpoint is down), nothing is
     * unmounted: the mount keeps serving and retrying, and the caller may call again, or call
     * with {@link Flush#DISCARD}.
     */
    void unmount(BucketMountId id, Flush flush);

    /**
     * Unmounts {@code id} as {@link #unmount} with {@link Flush#WAIT} does if every file written
     * through it is uploaded within {@code wait}; otherwise leaves it mounted, its daemon uploading
     * and retrying on its own, and returns how many files are still pending. Call again later (a
     * {@code wait} of zero only looks) to unmount it once they are up.
     * <p>Returns 0 once unmounted (or if nothing was there).
     * <p>On failure: as {@link #unmount} with {@link Flush#WAIT} (e.g. files pending and the daemon gone).
     */
    int unmountOnceUploaded(BucketMountId id, Duration wait);

    /** {@link #unmount(BucketMountId, Flush)} waiting for pending uploads. */
    default void unmount(BucketMountId id) {
        unmount(id, Flush.WAIT);
    }

    /**
     * Waits until every file closed through the live mount {@code id} so far is uploaded, as
     * {@link #unmount} with {@link Flush#WAIT} does, and leaves it mounted. A no-op if it is not live.
     * <p>On failure: {@code runtime_failed} if uploads are still pending after the flush timeout.
     */
    void flush(BucketMountId id);

    /** The mount {@code id} if it is live, as {@link #mount} returned it. */
    Optional<MountedBucket> mounted(BucketMountId id);

    /**
     * What host processes hold open under the mount {@code id}: open files and directories,
     * working directories and mapped files, one line each ({@code pid 1234: /data/x}, the path as
     * that process names it). Empty if nothing is open or the mount is not live. A checkpoint of
     * a sandbox asks first: CRIU would have to reopen those files through a FUSE mount that is
     * made again at restore (see {@code SandboxBuckets#requireNothingOpen}).
     */
    List<String> openFiles(BucketMountId id);

    /**
     * Every mount this service left on the host, live or not, by id: what to reconcile after a
     * restart. Reads only; changes nothing.
     */
    List<OwnedBucketMount> listOwned();

    /** What {@link #unmount} does with files written through the mount but not uploaded yet. */
    enum Flush {
        /** Upload them first; fail, leaving the mount as it is, if that takes too long. */
        WAIT,
        /**
         * Drop them: the bucket keeps its old objects. A mount detached earlier whose daemon still
         * serves open files is ended too (those files then fail with {@code ENOTCONN}).
         */
        DISCARD
    }
}
