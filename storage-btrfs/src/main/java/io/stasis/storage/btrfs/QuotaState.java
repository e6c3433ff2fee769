package io.stasis.storage.btrfs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A btrfs filesystem's quota accounting as the kernel reports it in
 * {@code /sys/fs/btrfs/<uuid>/qgroups/}: for logs and for telling an operator why limits behave
 * as they do.
 *
 * @param mode         {@code qgroup} (full accounting: shared extents count for every subvolume that
 *                     references them) or {@code squota} (simple quotas: an extent counts only for the
 *                     subvolume that wrote it); kernels without the {@code mode} file (before 6.7)
 *                     have only full accounting, so {@code qgroup} there too
 * @param inconsistent the numbers are not trustworthy until a rescan ends (right after quotas were
 *                     turned on for a filesystem that holds data)
 */
record QuotaState(String mode, boolean inconsistent) {
    static final Path SYSFS = Path.of("/sys/fs/btrfs");

    /** Empty when the filesystem has no quota directory there (quotas off) or it cannot be read. */
    static Optional<QuotaState> read(Path sysfs, String filesystemId) {
        Path dir = sysfs.resolve(filesystemId).resolve("qgroups");
        try {
            if (!Files.isDirectory(dir)) return Optional.empty();
            Path mode = dir.resolve("mode");
            Path inconsistent = dir.resolve("inconsistent");
            return Optional.of(new QuotaState(
                    Files.exists(mode) ? Files.readString(mode).strip() : "qgroup",
                    Files.exists(inconsistent) && Files.readString(inconsistent).strip().equals("1")));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Whether the running kernel can do simple quotas at all (it lists the feature in sysfs). */
    static boolean kernelSupportsSimple(Path sysfs) {
        return Files.exists(sysfs.resolve("features").resolve("simple_quota"));
    }

    boolean simple() {
        return mode.equals("squota");
    }
}
