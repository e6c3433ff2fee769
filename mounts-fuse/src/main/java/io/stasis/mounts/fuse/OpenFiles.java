package io.stasis.mounts.fuse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Which host processes use a filesystem, found by its device number in {@code /proc}: open file
 * descriptors, working and root directories, and mapped files. Seen from the host, so processes in
 * every mount namespace (a sandbox's) count, whatever path they reach the filesystem by.
 */
final class OpenFiles {
    private OpenFiles() {
    }

    /**
     * One line per use ({@code pid 42: /data/x}, the path as that process names it) of the
     * filesystem of device {@code dev} ({@code st_dev}), by any process but {@code exceptPid}.
     */
    static List<String> onDevice(long dev, long exceptPid) {
        String mapsDev = String.format("%02x:%02x", major(dev), minor(dev));
        var out = new ArrayList<String>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path proc : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                long pid = Long.parseLong(proc.getFileName().toString());
                if (pid == exceptPid || pid == ProcessHandle.current().pid()) continue;
                scan(proc, pid, dev, mapsDev, out);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list /proc", e);
        }
        return out;
    }

    private static void scan(Path proc, long pid, long dev, String mapsDev, List<String> out) {
        var links = new ArrayList<Path>(List.of(proc.resolve("cwd"), proc.resolve("root")));
        try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
            fds.forEach(links::add);
        } catch (IOException | UncheckedIOException e) {
            return; // the process ended meanwhile
        }
        for (Path link : links) {
            if (devOf(link) == dev) out.add("pid " + pid + ": " + target(link));
        }
        try {
            for (String line : Files.readAllLines(proc.resolve("maps"))) {
                String[] fields = line.split("\\s+", 6);
                if (fields.length == 6 && fields[3].equals(mapsDev) && !fields[4].equals("0")) out.add("pid " + pid + ": " + fields[5] + " (mapped)");
            }
        } catch (IOException e) {
            // ended meanwhile
        }
    }

    /** The device of what a {@code /proc} link points to (followed), or -1. */
    private static long devOf(Path link) {
        try {
            return ((Number) Files.getAttribute(link, "unix:dev")).longValue();
        } catch (IOException | RuntimeException e) {
            return -1; // gone, or a dead mount
        }
    }

    private static String target(Path link) {
        try {
            return Files.readSymbolicLink(link).toString();
        } catch (IOException e) {
            return link.toString();
        }
    }

    /** glibc's {@code major()} of a {@code dev_t}. */
    static long major(long dev) {
        return ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
    }

    /** glibc's {@code minor()} of a {@code dev_t}. */
    static long minor(long dev) {
        return (dev & 0xff) | ((dev >>> 12) & ~0xffL);
    }
}
