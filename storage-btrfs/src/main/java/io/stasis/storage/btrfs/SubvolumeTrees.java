package io.stasis.storage.btrfs;

import io.stasis.core.error.StasisException;
import io.stasis.host.FileTrees;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes what the stores put in the pool: a subvolume with whatever subvolumes a sandbox nested
 * in it, or a plain directory (ours, or someone else's in our namespace). Shared by the root and
 * the volume store.
 */
final class SubvolumeTrees {
    private static final Logger log = LoggerFactory.getLogger(SubvolumeTrees.class);
    private static final int ENOTEMPTY = 39;

    private final Subvolumes subvolumes;

    SubvolumeTrees(Subvolumes subvolumes) {
        this.subvolumes = subvolumes;
    }

    /**
     * A subvolume with whatever it nests, or a plain directory tree: the subvolumes directly in it
     * go first (a receive's staging directory holds some), then the rest, not following links.
     */
    void delete(Path path) throws IOException {
        if (Subvolumes.isSubvolume(path)) {
            deleteSubvolume(path);
            return;
        }
        if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> inner = Files.list(path)) {
                for (Path p : inner.toList()) if (Subvolumes.isSubvolume(p)) deleteSubvolume(p);
            }
        }
        FileTrees.deleteRecursively(path); // does not follow links
    }

    /** As {@link #delete}, logging a failure instead of throwing it: for what nothing depends on. */
    void deleteQuietly(Path path, String what) {
        try {
            delete(path);
        } catch (IOException | RuntimeException e) {
            // Left for the next start's recovery; nothing depends on it.
            log.atWarn().addKeyValue("path", path).setCause(e).log("could not delete " + what);
        }
    }

    /**
     * Deletes a subvolume. If it holds nested subvolumes (a sandbox can create some: creating one
     * needs no privilege), those go first, deepest first.
     */
    void deleteSubvolume(Path subvolume) throws IOException {
        try {
            subvolumes.delete(subvolume);
        } catch (StasisException e) {
            if (!isNotEmpty(e)) throw e;
            var nested = nestedSubvolumes(subvolume);
            if (nested.isEmpty()) throw e;
            log.atInfo().addKeyValue("path", subvolume).addKeyValue("nested", nested.size()).log("deleting nested subvolumes first");
            for (Path inner : nested) deleteSubvolume(inner);
            subvolumes.delete(subvolume);
        }
    }

    static boolean isNotEmpty(StasisException e) {
        Object errno = e.details().get("errno");
        if (errno instanceof Integer n) return n == ENOTEMPTY;
        Object stderr = e.details().get("stderr");
        return stderr != null && stderr.toString().contains("Directory not empty");
    }

    /** Subvolumes directly below {@code subvolume} (not below those), found by their root inode number. */
    static List<Path> nestedSubvolumes(Path subvolume) throws IOException {
        var found = new ArrayList<Path>();
        Files.walkFileTree(subvolume, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                if (dir.equals(subvolume) || !Subvolumes.isSubvolume(dir)) return FileVisitResult.CONTINUE;
                found.add(dir);
                return FileVisitResult.SKIP_SUBTREE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException exc) {
                return FileVisitResult.CONTINUE;
            }
        });
        found.sort(Comparator.comparingInt(Path::getNameCount).reversed());
        return found;
    }
}
