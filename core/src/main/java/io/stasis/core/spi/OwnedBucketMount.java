package io.stasis.core.spi;

import java.nio.file.Path;

/**
 * A bucket mount found on the host by {@link BucketMounts#listOwned()}, whatever the catalog says.
 *
 * @param id             its id (the name of its directory)
 * @param hostPath       its mount point
 * @param state          what is left of it
 * @param pendingUploads files written through the mount and not yet uploaded (they stay in the
 *                       mount's cache; mounting the same id again uploads them)
 */
public record OwnedBucketMount(BucketMountId id, Path hostPath, State state, int pendingUploads) {

    public enum State {
        /** Mounted and served by a live FUSE daemon. */
        ACTIVE,
        /**
         * Still in the mount table, but its FUSE daemon is gone (killed, crashed): every access
         * fails with {@code ENOTCONN}. Unmount it, or mount the same id again.
         */
        DEAD,
        /**
         * Out of the mount table (unmounted lazily because a file was open), with its daemon still
         * serving the open files; it ends when they are closed, and the directory can go then.
         */
        DETACHED,
        /** Only the directory is left (an unmount or a mount that stopped half-way). */
        UNMOUNTED
    }
}
