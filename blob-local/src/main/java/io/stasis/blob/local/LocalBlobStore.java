package io.stasis.blob.local;

import io.stasis.core.spi.BlobInfo;
import io.stasis.core.spi.BlobPage;
import io.stasis.core.spi.BlobStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link BlobStore} on a local directory: the object {@code a/b/c} is the file {@code ROOT/a/b/c}.
 *
 * <p><b>Atomic put</b>: the bytes go to a new file in {@code ROOT/.tmp}, which is fsynced, renamed
 * over the target (rename is atomic within one filesystem) and made durable by fsyncing the
 * target's directory, and the directories created for it, in turn. A crash leaves the old file or
 * the new one, and maybe a temporary: temporaries are named after the writing process, and those
 * of processes no longer running are removed when a store is opened on the directory.
 *
 * <p>Readers hold the file they opened, so a replaced object still reads whole. Directories are
 * never removed (a concurrent put may be about to use one), so emptied prefixes stay as empty
 * directories. One limit the S3 backend does not have: a key cannot also be a directory of
 * another key ({@code a} beside {@code a/b}); such a put fails. Listing walks the directories in
 * key order, skipping subtrees entirely below the page token, so a page costs the directories it
 * touches, not the whole store.
 */
public final class LocalBlobStore implements BlobStore {
    private static final Logger log = LoggerFactory.getLogger(LocalBlobStore.class);
    private static final String TEMP_DIR = ".tmp";
    private static final Pattern TEMP_NAME = Pattern.compile("(\\d{1,18})-[0-9a-f-]+\\.tmp");
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*");
    private static final int BUFFER = 64 << 10;

    private final Path root;
    private final Path temp;
    private final long pid = ProcessHandle.current().pid();

    /**
     * Opens (creating it if needed) the store in {@code root}, and removes temporaries that
     * processes no longer running left behind.
     */
    public LocalBlobStore(Path root) {
        try {
            Files.createDirectories(root);
            this.root = root.toRealPath();
            this.temp = this.root.resolve(TEMP_DIR);
            Files.createDirectories(temp);
            int reaped = reapTemporaries();
            log.atInfo().addKeyValue("root", this.root).addKeyValue("reapedTemporaries", reaped).log("local blob store opened");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the local blob store in " + root, e);
        }
    }

    @Override
    public void put(String key, InputStream content, long length) {
        BlobStore.checkKey(key);
        if (length < 0) throw new IllegalArgumentException("length of " + key + " is negative: " + length);
        Path target = root.resolve(key);
        Path file = temp.resolve(pid + "-" + UUID.randomUUID() + ".tmp");
        try {
            try (FileChannel out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                copyExactly(content, out, length, key);
                out.force(true);
            }
            createDirectories(target.getParent());
            Files.move(file, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            fsyncDirectory(target.getParent());
        } catch (IOException e) {
            var failure = new UncheckedIOException("put " + key + " in " + root + " failed: " + e.getMessage(), e);
            try {
                Files.deleteIfExists(file);
            } catch (IOException cleanup) {
                failure.addSuppressed(cleanup);
            }
            throw failure;
        }
    }

    @Override
    public Optional<InputStream> get(String key) {
        Path path = root.resolve(BlobStore.checkKey(key));
        try {
            if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) return Optional.empty();
            return Optional.of(Files.newInputStream(path));
        } catch (NoSuchFileException | NotDirectoryException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("get " + key + " from " + root + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public Optional<BlobInfo> head(String key) {
        return info(root.resolve(BlobStore.checkKey(key)), key);
    }

    @Override
    public BlobPage list(String prefix, Optional<String> pageToken, int maxKeys) {
        BlobStore.checkPrefix(prefix);
        BlobStore.checkPageSize(maxKeys);
        pageToken.ifPresent(BlobStore::checkKey);
        var found = new ArrayList<BlobInfo>(Math.min(maxKeys + 1, 1001));
        try {
            walk(root, "", prefix, pageToken.orElse(null), maxKeys + 1, found);
        } catch (IOException e) {
            throw new UncheckedIOException("list " + prefix + " in " + root + " failed: " + e.getMessage(), e);
        }
        if (found.size() <= maxKeys) return new BlobPage(found, Optional.empty());
        List<BlobInfo> page = found.subList(0, maxKeys);
        return new BlobPage(page, Optional.of(page.getLast().key()));
    }

    @Override
    public void delete(String key) {
        Path path = root.resolve(BlobStore.checkKey(key));
        try {
            if (!Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) Files.deleteIfExists(path);
        } catch (NotDirectoryException e) {
            // a parent is a file: there is no such object
        } catch (IOException e) {
            throw new UncheckedIOException("delete " + key + " from " + root + " failed: " + e.getMessage(), e);
        }
    }

    /** The directory the objects are in. */
    public Path root() {
        return root;
    }

    @Override
    public String toString() {
        return "local:" + root;
    }

    /** Adds to {@code found}, in key order, the objects under {@code dir} that match, until it holds {@code limit}. */
    private void walk(Path dir, String dirKey, String prefix, String after, int limit, List<BlobInfo> found) throws IOException {
        record Child(String name, String sortKey, boolean directory) {
        }
        var children = new ArrayList<Child>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (!SEGMENT.matcher(name).matches()) continue; // .tmp and anything not made by a put
                boolean directory = Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS);
                children.add(new Child(name, directory ? name + "/" : name, directory));
            }
        } catch (NoSuchFileException | NotDirectoryException e) {
            return;
        }
        children.sort(Comparator.comparing(Child::sortKey));
        for (Child child : children) {
            if (found.size() >= limit) return;
            String key = dirKey + child.sortKey();
            if (child.directory()) {
                boolean underPrefix = key.startsWith(prefix) || prefix.startsWith(key);
                boolean allBeforeToken = after != null && key.compareTo(after) < 0 && !after.startsWith(key);
                if (underPrefix && !allBeforeToken) walk(dir.resolve(child.name()), key, prefix, after, limit, found);
            } else if (key.startsWith(prefix) && (after == null || key.compareTo(after) > 0)) {
                info(dir.resolve(child.name()), key).ifPresent(found::add);
            }
        }
    }

    private Optional<BlobInfo> info(Path path, String key) {
        try {
            var attributes = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isRegularFile()) return Optional.empty();
            return Optional.of(new BlobInfo(key, attributes.size(), attributes.lastModifiedTime().toInstant()));
        } catch (NoSuchFileException | NotDirectoryException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("head " + key + " in " + root + " failed: " + e.getMessage(), e);
        }
    }

    private static void copyExactly(InputStream in, FileChannel out, long length, String key) throws IOException {
        byte[] buffer = new byte[(int) Math.min(BUFFER, Math.max(1, length))];
        long left = length;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) throw new IOException("the stream for " + key + " ended after " + (length - left) + " of " + length + " bytes");
            var bytes = ByteBuffer.wrap(buffer, 0, n);
            while (bytes.hasRemaining()) out.write(bytes);
            left -= n;
        }
        if (in.read() >= 0) throw new IOException("the stream for " + key + " has more than the " + length + " bytes announced");
    }

    /** Creates {@code dir} and any missing parents, fsyncing each parent so the new entries survive a crash. */
    private void createDirectories(Path dir) throws IOException {
        if (Files.isDirectory(dir)) return;
        createDirectories(dir.getParent());
        try {
            Files.createDirectory(dir);
            fsyncDirectory(dir.getParent());
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir)) throw new FileSystemException(dir.toString(), null, "an object is in the way of this directory");
        }
    }

    private static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    private int reapTemporaries() throws IOException {
        int reaped = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(temp)) {
            for (Path entry : entries) {
                var m = TEMP_NAME.matcher(entry.getFileName().toString());
                boolean writerGone = m.matches() && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty();
                if (writerGone && Files.deleteIfExists(entry)) reaped++;
            }
        }
        return reaped;
    }
}
