package io.stasis.fs.linux;

import static io.stasis.fs.linux.Confinement.lstat;
import static io.stasis.fs.linux.Confinement.openChildDirectory;
import static io.stasis.fs.linux.Syscalls.AT_REMOVEDIR;
import static io.stasis.fs.linux.Syscalls.SEEK_SET;

import java.util.Optional;

/**
 * Removes a name in a confined directory fd, a whole tree if it is a directory. The walk works on
 * directory fds and never follows a symlink, so a directory swapped for a symlink midway cannot
 * redirect it; an entry the sandbox keeps changing meanwhile is looked at again, a few times.
 */
final class TreeDeletion {
    /** Deeper trees are refused rather than risking the stack and one fd per level. */
    static final int MAX_DELETE_DEPTH = 1024;
    /** Tries before giving up on an entry the sandbox keeps changing while it is deleted. */
    private static final int MAX_ATTEMPTS = 16;

    private TreeDeletion() {
    }

    /** Removes one name in {@code dir}, recursively if a directory; returns quietly once it is gone. */
    static void removeEntry(Fd dir, String name, int depth) {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            Optional<Stat> stat = lstat(dir, name);
            if (stat.isEmpty()) return;
            if (!stat.get().isDirectory()) {
                try {
                    Syscalls.unlinkat(dir.value(), name, 0);
                    return;
                } catch (LinuxException e) {
                    if (e.is(Errno.ENOENT)) return;
                    if (!e.is(Errno.EISDIR)) throw e;
                    continue; // became a directory
                }
            }
            Fd child;
            try {
                child = openChildDirectory(dir, name);
            } catch (LinuxException e) {
                if (e.is(Errno.ENOENT)) return;
                if (e.is(Errno.ELOOP) || e.is(Errno.ENOTDIR)) continue; // swapped for a symlink or file: look again
                throw e;
            }
            try (child) {
                emptyDirectory(child, depth + 1);
            }
            try {
                Syscalls.unlinkat(dir.value(), name, AT_REMOVEDIR);
                return;
            } catch (LinuxException e) {
                if (e.is(Errno.ENOENT)) return;
                if (!e.is(Errno.ENOTEMPTY) && !e.is(Errno.ENOTDIR)) throw e; // refilled or swapped: again
            }
        }
        throw new LinuxException(Errno.ENOTEMPTY, "unlinkat", name, "kept changing while being deleted");
    }

    private static void emptyDirectory(Fd dir, int depth) {
        if (depth > MAX_DELETE_DEPTH)
            throw new LinuxException(Errno.ELOOP, "unlinkat", "(depth " + depth + ")", "directory tree deeper than " + MAX_DELETE_DEPTH);
        for (int round = 0; round < MAX_ATTEMPTS; round++) {
            Syscalls.lseek(dir.value(), 0, SEEK_SET);
            var entries = Syscalls.readDirectory(dir.value());
            if (entries.isEmpty()) return;
            for (var e : entries) removeEntry(dir, e.name(), depth);
        }
    }
}
