package io.stasis.core.spi;

import java.nio.file.Path;

/**
 * A bucket mounted on the host: what {@link BucketMounts#mount(BucketMount)} returns.
 *
 * @param id       the mount's id
 * @param hostPath where the bucket's files appear on the host (a FUSE mount point owned by the
 *                 service): the source of the bind mount into a sandbox
 * @param readOnly whether the mount refuses writes
 */
public record MountedBucket(BucketMountId id, Path hostPath, boolean readOnly) {
}
