package io.stasis.host;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Deleting whole file trees that a sandbox or a tool may have filled: trees with absolute
 * symlinks to host files, files of other users, read-only files and directories.
 * <ul>
 *   <li>Symlinks are never followed: a link is deleted, never what it points at.</li>
 *   <li>Permission bits do not matter to root (CAP_DAC_OVERRIDE), which is how the service runs:
 *       a mode-0000 directory or a read-only file owned by anyone goes like any other. Another user
 *       gets {@link java.nio.file.AccessDeniedException} for what it may not delete.</li>
 *   <li>What vanishes meanwhile (the whole tree, or entries removed by someone else) is not an
 *       error: the goal is that it is gone.</li>
 *   <li>The walk does not stop at mount points: unmount what is mounted inside first
 *       ({@link Mounts#unmountAllBelow}), or the delete reaches into the mounted filesystem.</li>
 * </ul>
 */
public final class FileTrees {
    private FileTrees() {
    }

    /**
     * Deletes {@code root} and everything below it; if {@code root} is a symlink, only the link.
     * Returns false if there was nothing at {@code root}.
     */
    public static boolean deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) return false;
        delete(root, true);
        return true;
    }

    /**
     * {@link #deleteRecursively}, after unmounting whatever is mounted below {@code root}: for trees a
     * tool works in (CRIU's work directory, runc's bundle), where a tool killed midway leaves its
     * mounts, and a walk through them would delete another filesystem's files (a sandbox's root).
     */
    public static boolean deleteRecursivelyUnmounting(Path root) throws IOException {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) return false;
        if (!MountInfo.read().below(root.toRealPath()).isEmpty()) Mounts.fromSystem().unmountAllBelow(root);
        return deleteRecursively(root);
    }

    /**
     * Deletes everything below the directory {@code dir} and keeps {@code dir} itself (e.g. a
     * subvolume or a mount point). Returns false if there was nothing at {@code dir}.
     *
     * @throws NotDirectoryException if {@code dir} is not a directory (a symlink to one is not)
     */
    public static boolean deleteContents(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) return false;
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) throw new NotDirectoryException(dir.toString());
        delete(dir, false);
        return true;
    }

    private static void delete(Path root, boolean includingRoot) throws IOException {
        // No FOLLOW_LINKS: a symlink, to a directory or not, is visited as a file and unlinked.
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.deleteIfExists(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException exc) throws IOException {
                if (exc instanceof NoSuchFileException) return FileVisitResult.CONTINUE; // gone meanwhile
                throw exc;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                if (exc != null && !(exc instanceof NoSuchFileException)) throw exc;
                if (includingRoot || !dir.equals(root)) Files.deleteIfExists(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
