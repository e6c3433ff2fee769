package io.stasis.runtime.runc;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.host.FileTrees;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * CRIU images on the host, one directory per checkpoint under {@code <state>/images}. An image
 * counts as complete only once the marker written after a successful dump exists, so a dump cut
 * short by a crash is never restored.
 */
final class ImageStore {
    private static final String COMPLETE = ".stasis-complete";

    private final Path root;
    private final Path work;

    ImageStore(Path stateDir) {
        this.root = stateDir.resolve("images");
        this.work = stateDir.resolve("work");
    }

    Path dir(CheckpointId id) {
        return root.resolve(id.value());
    }

    /** A fresh, empty image directory. */
    Path create(CheckpointId id) {
        Path dir = dir(id);
        try {
            Files.createDirectories(root);
            FileTrees.deleteRecursively(dir);
            Files.createDirectory(dir);
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A fresh CRIU work directory (logs, statistics) for one dump or restore. */
    Path workDir(CheckpointId id, String step) {
        Path dir = work.resolve(id.value() + "-" + step);
        try {
            FileTrees.deleteRecursively(dir);
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Marks the image complete and readable by the restored sandbox's root (runc makes it 0700;
     * root inside the sandbox is an unprivileged host uid). Returns its size in bytes.
     */
    long seal(CheckpointId id) {
        Path dir = dir(id);
        try {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x"));
            long size;
            try (Stream<Path> files = Files.walk(dir)) {
                size = files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
            }
            Files.writeString(dir.resolve(COMPLETE), Long.toString(size));
            return size;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    boolean isComplete(CheckpointId id) {
        return Files.exists(dir(id).resolve(COMPLETE));
    }

    /** The size recorded when the image was sealed; empty if it is not complete. */
    java.util.OptionalLong completeSize(CheckpointId id) {
        try {
            return java.util.OptionalLong.of(Long.parseLong(Files.readString(dir(id).resolve(COMPLETE)).strip()));
        } catch (IOException | NumberFormatException e) {
            return java.util.OptionalLong.empty();
        }
    }

    void delete(CheckpointId id) {
        try {
            FileTrees.deleteRecursively(dir(id));
            try (Stream<Path> works = Files.exists(work) ? Files.list(work) : Stream.empty()) {
                for (Path w : works.filter(p -> p.getFileName().toString().startsWith(id.value() + "-")).toList())
                    FileTrees.deleteRecursively(w);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Set<CheckpointId> list() {
        var ids = new TreeSet<CheckpointId>();
        if (!Files.isDirectory(root)) return ids;
        try (Stream<Path> dirs = Files.list(root)) {
            dirs.map(p -> p.getFileName().toString()).filter(CheckpointId::isValid).map(CheckpointId::new).forEach(ids::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return ids;
    }
}
