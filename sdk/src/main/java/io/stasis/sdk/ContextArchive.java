package io.stasis.sdk;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.zip.GZIPOutputStream;

/**
 * A build context: a local directory as a gzip'd tar archive ({@link TarWriter}), made with the
 * JDK alone. Directories, regular files (hard links as copies) and symbolic links (not followed)
 * keep their names, permission bits and modification times; everything is owned by root, as a
 * Dockerfile's COPY makes it. Sockets, FIFOs and device files are left out, as they are by
 * {@code docker build}.
 *
 * <p>The same directory gives the same bytes: entries are sorted by name and the gzip header has
 * no time. That matters because the server keys its cache of COPY steps by the archive's digest.
 */
final class ContextArchive {
    private static final LinkOption[] NO_FOLLOW = {LinkOption.NOFOLLOW_LINKS};

    private final Path root;
    private final long maxBytes;
    private final TarWriter tar;
    private final LimitedBuffer buffer;
    private final GZIPOutputStream gzip;

    private ContextArchive(Path root, long maxBytes) throws IOException {
        this.root = root;
        this.maxBytes = maxBytes;
        this.buffer = new LimitedBuffer(maxBytes);
        this.gzip = new GZIPOutputStream(buffer, 64 * 1024);
        this.tar = new TarWriter(gzip);
    }

    /**
     * The directory as a tar.gz of at most {@code maxBytes}.
     *
     * @throws IllegalArgumentException when it is not a directory, or its archive is larger
     * @throws UncheckedIOException     when it cannot be read
     */
    static byte[] of(Path directory, long maxBytes) {
        if (!Files.isDirectory(directory)) {
            throw new IllegalArgumentException("the build context must be a directory: " + directory
                    + (Files.exists(directory) ? " is not one" : " does not exist"));
        }
        ContextArchive archive = null;
        try {
            archive = new ContextArchive(directory, maxBytes);
            // The context's own directory is 0755 whatever it is here (a mktemp -d is 0700): its mode
            // would become that of the directory a "COPY . /dest" fills.
            archive.tar.directory("./", 0755, mtime(Files.readAttributes(directory, BasicFileAttributes.class)));
            archive.children(directory);
            archive.tar.finish();
            archive.gzip.finish();
            return archive.buffer.toByteArray();
        } catch (ContextTooLarge e) {
            throw new IllegalArgumentException("the build context " + directory + " is larger than " + (maxBytes >> 20)
                    + " MiB once compressed (the server's limit), reached while adding " + e.entry
                    + ": leave large files out of it", e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the build context " + directory + ": " + describe(e), e);
        } finally {
            if (archive != null) archive.release();
        }
    }

    /** Frees the compressor's native memory, whether the archive was finished or abandoned. */
    private void release() {
        buffer.discarding = true; // an abandoned archive's last compressed bytes go nowhere
        try {
            gzip.close();
        } catch (IOException cannotHappen) {
            // Writes to a ByteArrayOutputStream do not fail.
        }
    }

    private void children(Path dir) throws IOException {
        var entries = new ArrayList<Path>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            stream.forEach(entries::add);
        }
        entries.sort(Comparator.comparing(p -> p.getFileName().toString()));
        for (Path entry : entries) add(entry);
    }

    private void add(Path path) throws IOException {
        String name = "./" + relativeName(path);
        buffer.entry = name;
        BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class, NO_FOLLOW);
        long mtime = mtime(attributes);
        if (attributes.isSymbolicLink()) {
            tar.symlink(name, Files.readSymbolicLink(path).toString(), mtime);
        } else if (attributes.isDirectory()) {
            tar.directory(name, mode(path, attributes, 0755), mtime);
            children(path);
        } else if (attributes.isRegularFile()) {
            if (attributes.size() > maxBytes * 64) throw new ContextTooLarge(name); // not worth compressing to find out
            try (InputStream in = Files.newInputStream(path, NO_FOLLOW)) {
                tar.file(name, mode(path, attributes, Files.isExecutable(path) ? 0755 : 0644), mtime, attributes.size(), in);
            }
        }
        // Anything else (sockets, FIFOs, devices) stays out: it has no content to copy.
    }

    /** The path below the context's root with {@code /} separators, whatever the platform's are. */
    private String relativeName(Path path) {
        Path relative = root.relativize(path);
        var parts = new ArrayList<String>();
        for (Path part : relative) parts.add(part.toString());
        return String.join("/", parts);
    }

    /** The permission bits with setuid, setgid and sticky where the platform tells them; else {@code fallback}. */
    private static int mode(Path path, BasicFileAttributes attributes, int fallback) throws IOException {
        try {
            Object unixMode = Files.getAttribute(path, "unix:mode", NO_FOLLOW);
            if (unixMode instanceof Integer mode) return mode & 07777;
        } catch (UnsupportedOperationException | IllegalArgumentException notUnix) {
            // Not Linux or macOS: POSIX permissions, or none.
        }
        if (attributes instanceof PosixFileAttributes posix) return bits(posix.permissions());
        try {
            return bits(Files.readAttributes(path, PosixFileAttributes.class, NO_FOLLOW).permissions());
        } catch (UnsupportedOperationException notPosix) {
            return fallback;
        }
    }

    private static int bits(Iterable<PosixFilePermission> permissions) {
        int mode = 0;
        for (PosixFilePermission p : permissions) mode |= 1 << (8 - p.ordinal()); // OWNER_READ is 0400 ... OTHERS_EXECUTE 01
        return mode;
    }

    private static long mtime(BasicFileAttributes attributes) {
        return attributes.lastModifiedTime().toMillis() / 1000;
    }

    private static String describe(IOException e) {
        if (e instanceof NoSuchFileException missing) return missing.getFile() + " vanished while it was read";
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** The compressed archive in memory, refusing to grow past the limit (the server would refuse it anyway). */
    private static final class LimitedBuffer extends ByteArrayOutputStream {
        private final long limit;
        private String entry = "./";
        private boolean discarding;

        LimitedBuffer(long limit) {
            this.limit = limit;
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            if (discarding) return;
            check(len);
            super.write(b, off, len);
        }

        @Override
        public synchronized void write(int b) {
            if (discarding) return;
            check(1);
            super.write(b);
        }

        private void check(int more) {
            if (count + (long) more > limit) throw new ContextTooLarge(entry);
        }
    }

    /** Unchecked, to pass through {@link ByteArrayOutputStream#write}, which declares no IOException. */
    private static final class ContextTooLarge extends RuntimeException {
        private final String entry;

        ContextTooLarge(String entry) {
            super(null, null, false, false);
            this.entry = entry;
        }
    }
}
