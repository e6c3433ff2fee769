package io.stasis.runtime.runc;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.spi.StreamReader;
import io.stasis.host.FileTrees;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;
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
            FileTrees.deleteRecursivelyUnmounting(dir);
            Files.createDirectory(dir);
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A fresh CRIU work directory (logs, statistics) for one dump or restore. */
    Path workDir(CheckpointId id, String step) {
        Path dir = existingWorkDir(id, step);
        try {
            FileTrees.deleteRecursivelyUnmounting(dir);
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Removes what {@link #workDir} made for one step, if anything. */
    void deleteWorkDir(CheckpointId id, String step) {
        try {
            FileTrees.deleteRecursivelyUnmounting(existingWorkDir(id, step));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Where {@link #workDir} put the work of a dump or restore, as it is now (for its log after a crash). */
    Path existingWorkDir(CheckpointId id, String step) {
        return work.resolve(id.value() + "-" + step);
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
    OptionalLong completeSize(CheckpointId id) {
        try {
            return OptionalLong.of(Long.parseLong(Files.readString(dir(id).resolve(COMPLETE)).strip()));
        } catch (IOException | NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    private static final byte[] MAGIC = "STASIS-CRIU-IMAGE 1\n".getBytes(StandardCharsets.US_ASCII);

    /**
     * The image's files as one stream: {@code STASIS-CRIU-IMAGE 1\n}, then per regular file a
     * 16-bit name length, the UTF-8 name, a 64-bit size and the bytes, ending with a zero name
     * length (big-endian). The completion marker is not in it: {@link #importFrom} seals anew.
     */
    <R> R exportTo(CheckpointId id, StreamReader<R> reader) throws IOException {
        if (!isComplete(id)) throw new IOException("the image " + id + " is missing or incomplete");
        Path dir = dir(id);
        List<Path> files;
        try (Stream<Path> entries = Files.list(dir)) {
            files = entries.filter(p -> !p.getFileName().toString().equals(COMPLETE)).sorted().toList();
        }
        for (Path f : files)
            if (!Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)) throw new IOException("not a regular file in image " + id + ": " + f);
        var parts = new ArrayList<Supplier<InputStream>>();
        parts.add(() -> new ByteArrayInputStream(MAGIC));
        for (Path f : files) {
            parts.add(() -> {
                try {
                    byte[] name = f.getFileName().toString().getBytes(StandardCharsets.UTF_8);
                    var header = ByteBuffer.allocate(2 + name.length + 8);
                    header.putShort((short) name.length).put(name).putLong(Files.size(f));
                    return new ByteArrayInputStream(header.array());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            parts.add(() -> {
                try {
                    return Files.newInputStream(f);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        parts.add(() -> new ByteArrayInputStream(new byte[2]));
        var iterator = parts.iterator();
        var enumeration = new Enumeration<InputStream>() {
            public boolean hasMoreElements() {
                return iterator.hasNext();
            }

            public InputStream nextElement() {
                return iterator.next().get();
            }
        };
        try (var stream = new SequenceInputStream(enumeration)) {
            return reader.read(stream);
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Writes an image read from {@link #exportTo}'s format and seals it; returns its size. */
    long importFrom(CheckpointId id, InputStream stream) throws IOException {
        Path dir = create(id);
        try {
            var in = new DataInputStream(stream);
            byte[] magic = in.readNBytes(MAGIC.length);
            if (!Arrays.equals(magic, MAGIC)) throw new IOException("not a stasis CRIU image stream");
            while (true) {
                int nameLength = in.readUnsignedShort();
                if (nameLength == 0) break;
                String name = new String(in.readNBytes(nameLength), StandardCharsets.UTF_8);
                if (name.contains("/") || name.equals(".") || name.equals("..") || name.equals(COMPLETE))
                    throw new IOException("bad file name in image stream: " + name);
                long size = in.readLong();
                try (var out = Files.newOutputStream(dir.resolve(name), StandardOpenOption.CREATE_NEW)) {
                    long left = size;
                    byte[] buffer = new byte[1 << 16];
                    while (left > 0) {
                        int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
                        if (n < 0) throw new EOFException("image stream ends inside " + name);
                        out.write(buffer, 0, n);
                        left -= n;
                    }
                }
            }
            return seal(id);
        } catch (IOException | RuntimeException e) {
            try {
                delete(id);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    void delete(CheckpointId id) {
        try {
            FileTrees.deleteRecursivelyUnmounting(dir(id));
            try (Stream<Path> works = Files.exists(work) ? Files.list(work) : Stream.empty()) {
                for (Path w : works.filter(p -> p.getFileName().toString().startsWith(id.value() + "-")).toList())
                    FileTrees.deleteRecursivelyUnmounting(w);
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
