package io.stasis.templates.oci;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A private temporary directory (0700) that image blobs are written to as they arrive, hashed on
 * the way, so that an archive whose members come in any order, or a pull, can be checked and
 * read afterwards. Bounded: all files together may hold at most {@code limit} bytes, and a write
 * that would go past it is refused ({@code too_large}) and its partial file removed. Files are
 * named by a counter, never by anything an archive says. {@link #close()} removes the directory
 * and everything in it; it is idempotent.
 */
public final class BlobSpool implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BlobSpool.class);
    /** 8 GiB: more than any sensible root filesystem image, less than a tar bomb. */
    public static final long DEFAULT_LIMIT = 8L << 30;

    private final Path dir;
    private final long limit;
    private final AtomicLong used = new AtomicLong();
    private final AtomicLong counter = new AtomicLong();
    private volatile boolean closed;

    private BlobSpool(Path dir, long limit) {
        this.dir = dir;
        this.limit = limit;
    }

    /** A new spool directory in {@code parent} (the JDK's temporary directory when null). */
    public static BlobSpool create(Path parent, long limit) {
        if (limit <= 0) throw new IllegalArgumentException("limit must be > 0, was " + limit);
        try {
            var perms = PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));
            Path dir = parent == null ? Files.createTempDirectory("stasis-image-", perms) : Files.createTempDirectory(parent, "stasis-image-", perms);
            return new BlobSpool(dir, limit);
        } catch (IOException e) {
            throw ImageException.io("spool", "cannot create a spool directory in " + (parent == null ? "the temporary directory" : parent)
                    + ": " + e.getMessage(), e);
        }
    }

    public Path dir() {
        return dir;
    }

    public long limit() {
        return limit;
    }

    /** Bytes held by the files written so far (removed ones included: the limit bounds the work, not only the disk). */
    public long used() {
        return used.get();
    }

    /**
     * Copies {@code in} to a new file, hashing it. At most {@code maxSize} bytes (and what the
     * spool has left) are taken; more is refused as {@code too_large} naming {@code subject}. An
     * {@link ImageException} from {@code in} passes through; another failure of {@code in} or of
     * the disk is an {@code io} one. Either way no file is left.
     */
    public SpooledBlob write(InputStream in, String subject, long maxSize) {
        if (closed) throw new IllegalStateException("the spool " + dir + " is closed");
        Path file = dir.resolve("blob-" + counter.incrementAndGet());
        MessageDigest sha = Digest.sha256();
        long size = 0;
        byte[] buffer = new byte[64 * 1024];
        try (OutputStream out = Files.newOutputStream(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            while (true) {
                int n = read(in, buffer, subject);
                if (n < 0) break;
                size += n;
                if (size > maxSize)
                    throw ImageException.tooLarge(subject, "more than " + maxSize + " bytes");
                if (used.addAndGet(n) > limit)
                    throw ImageException.tooLarge(subject, "the image is larger than the spool limit of " + limit + " bytes");
                sha.update(buffer, 0, n);
                out.write(buffer, 0, n);
            }
        } catch (IOException e) {
            deleteQuietly(file);
            throw ImageException.io(subject, "cannot spool to " + file + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            deleteQuietly(file);
            throw e;
        }
        return new SpooledBlob(file, size, Digest.of(sha));
    }

    /** Deletes every file but those named, to give back the disk of blobs nobody will read. */
    void retainOnly(Set<Path> keep) {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) if (!keep.contains(f)) Files.deleteIfExists(f);
        } catch (IOException e) {
            log.atWarn().addKeyValue("spool", dir).setCause(e).log("could not trim the spool; it goes when closed");
        }
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        try {
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) return;
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.toList()) Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            log.atWarn().addKeyValue("spool", dir).setCause(e).log("could not remove the image spool");
        }
    }

    private static int read(InputStream in, byte[] buffer, String subject) {
        try {
            return in.read(buffer);
        } catch (IOException e) {
            throw ImageException.io(subject, "reading failed: " + e.getMessage(), e);
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // the spool's close removes it
        }
    }
}
