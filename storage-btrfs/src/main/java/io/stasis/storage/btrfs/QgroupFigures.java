package io.stasis.storage.btrfs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The kernel's figures for each quota group of a filesystem, read from
 * {@code /sys/fs/btrfs/<uuid>/qgroups/<level>_<id>/}: no tool run, no tree walked.
 *
 * @param dir that {@code qgroups} directory
 */
record QgroupFigures(Path dir) {
    static QgroupFigures of(Path sysfs, String filesystemId) {
        return new QgroupFigures(sysfs.resolve(filesystemId).resolve("qgroups"));
    }

    /** Every group the filesystem has; empty when quotas are off. */
    Set<Qgroup> groups() {
        var groups = new TreeSet<Qgroup>();
        if (!Files.isDirectory(dir)) return groups;
        try (Stream<Path> entries = Files.list(dir)) {
            entries.map(p -> p.getFileName().toString()).filter(name -> name.matches("\\d+_\\d+")).forEach(name -> groups.add(Qgroup.parse(name)));
        } catch (IOException e) {
            return groups;
        }
        return groups;
    }

    /**
     * The bytes charged to {@code group} (under simple quotas, what its members wrote and something
     * still holds), writes not yet committed included (they are reserved until then); 0 if it is gone.
     */
    long used(Qgroup group) {
        return number(group, "referenced") + number(group, "rsv_data");
    }

    boolean has(Qgroup group) {
        return Files.isDirectory(dir.resolve(group.level() + "_" + group.id()));
    }

    /** {@code group}'s exclusive limit, 0 if it has none. */
    long limit(Qgroup group) {
        return number(group, "max_exclusive");
    }

    private long number(Qgroup group, String name) {
        try {
            return Long.parseLong(Files.readString(dir.resolve(group.level() + "_" + group.id()).resolve(name)).strip());
        } catch (IOException | NumberFormatException e) {
            return 0;
        }
    }
}
