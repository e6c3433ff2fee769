package io.stasis.storage.btrfs;

import io.stasis.core.spi.FileOwner;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives a whole tree to the host uid/gid that root inside a sandbox maps to. runc 1.1.5 has no
 * idmapped mounts, so a template's files must already belong to the mapped root; snapshots
 * inherit the ownership for free.
 */
final class TreeOwnership {
    private static final Logger log = LoggerFactory.getLogger(TreeOwnership.class);
    private static final int SETUID_SETGID = 06000;

    private TreeOwnership() {
    }

    /** What the walk did. */
    record Result(long files, long sizeBytes) {
    }

    /**
     * Changes the owner of {@code root} and everything below it, never following symlinks
     * (lchown: a link pointing at /etc/shadow changes the link, not the host's file). chown(2)
     * clears setuid/setgid bits, so they are put back afterwards. File capabilities
     * ({@code security.capability}) are also cleared by chown and are not restored. Does not
     * descend into other filesystems or nested subvolumes. Returns the sum of regular file sizes.
     */
    static Result chown(Path root, FileOwner owner) throws IOException {
        return walk(root, owner);
    }

    /** What {@link #chown} would count, changing nothing: a tree whose files belong to the sandbox already. */
    static Result measure(Path root) throws IOException {
        return walk(root, null);
    }

    private static Result walk(Path root, FileOwner owner) throws IOException {
        long[] totals = new long[2];
        Object rootDevice = Files.getAttribute(root, "unix:dev", LinkOption.NOFOLLOW_LINKS);
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                if (!dir.equals(root) && !rootDevice.equals(Files.getAttribute(dir, "unix:dev", LinkOption.NOFOLLOW_LINKS))) {
                    log.atWarn().addKeyValue("dir", dir).log("not changing owners below a mount or nested subvolume");
                    return FileVisitResult.SKIP_SUBTREE;
                }
                give(dir);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                give(file);
                if (attrs.isRegularFile()) totals[1] += attrs.size();
                return FileVisitResult.CONTINUE;
            }

            private void give(Path p) throws IOException {
                totals[0]++;
                if (owner == null) return;
                Map<String, Object> a = Files.readAttributes(p, "unix:mode,uid,gid", LinkOption.NOFOLLOW_LINKS);
                int mode = (Integer) a.get("mode");
                if ((Integer) a.get("uid") != owner.uid()) Files.setAttribute(p, "unix:uid", owner.uid(), LinkOption.NOFOLLOW_LINKS);
                if ((Integer) a.get("gid") != owner.gid()) Files.setAttribute(p, "unix:gid", owner.gid(), LinkOption.NOFOLLOW_LINKS);
                // Only files and directories: setting a mode opens the file, which blocks on a FIFO.
                int type = mode & 0170000;
                boolean fileOrDir = type == 0100000 || type == 0040000;
                if (fileOrDir && (mode & SETUID_SETGID) != 0) Files.setAttribute(p, "unix:mode", mode & 07777, LinkOption.NOFOLLOW_LINKS);
            }
        });
        return new Result(totals[0], totals[1]);
    }
}
