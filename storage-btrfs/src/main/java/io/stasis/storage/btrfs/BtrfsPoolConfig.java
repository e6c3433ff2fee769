package io.stasis.storage.btrfs;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Where the btrfs filesystem holding every root lives.
 *
 * @param dataDir        the service's data directory; holds the image file, its mount point and
 *                       the pool's lock file
 * @param existingMount  a btrfs filesystem (or a directory on one) that someone else mounted:
 *                       used as it is and never unmounted. Empty (the default): a sparse image
 *                       file {@code <dataDir>/roots.img}, loop-mounted at {@code <dataDir>/btrfs}
 * @param imageSizeBytes the image file's apparent size; it is sparse, so disk space is only used
 *                       as roots are written. Only read when the image is first created.
 */
public record BtrfsPoolConfig(Path dataDir, Optional<Path> existingMount, long imageSizeBytes) {
    public static final long DEFAULT_IMAGE_SIZE = 64L << 30;
    /** mkfs.btrfs refuses smaller devices (with the default DUP metadata). */
    public static final long MIN_IMAGE_SIZE = 256L << 20;

    public BtrfsPoolConfig {
        Objects.requireNonNull(dataDir, "dataDir");
        Objects.requireNonNull(existingMount, "existingMount");
        dataDir = dataDir.toAbsolutePath().normalize();
        existingMount = existingMount.map(p -> p.toAbsolutePath().normalize());
        if (imageSizeBytes < MIN_IMAGE_SIZE)
            throw new IllegalArgumentException("imageSizeBytes was " + imageSizeBytes + "; at least " + MIN_IMAGE_SIZE + " is needed");
    }

    /** The default: a 64 GiB sparse image in {@code dataDir}. */
    public static BtrfsPoolConfig image(Path dataDir) {
        return new BtrfsPoolConfig(dataDir, Optional.empty(), DEFAULT_IMAGE_SIZE);
    }

    public static BtrfsPoolConfig image(Path dataDir, long imageSizeBytes) {
        return new BtrfsPoolConfig(dataDir, Optional.empty(), imageSizeBytes);
    }

    /** Roots on a btrfs filesystem mounted by someone else, at or below {@code btrfsPath}. */
    public static BtrfsPoolConfig existingMount(Path dataDir, Path btrfsPath) {
        return new BtrfsPoolConfig(dataDir, Optional.of(btrfsPath), DEFAULT_IMAGE_SIZE);
    }

    public Path imageFile() {
        return dataDir.resolve("roots.img");
    }

    /** Where the pool's files are: the existing mount, or the image's mount point. */
    public Path poolPath() {
        return existingMount.orElse(dataDir.resolve("btrfs"));
    }
}
