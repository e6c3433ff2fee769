package io.stasis.fs.linux;

import static io.stasis.fs.linux.Confinement.MAX_SYMLINK_HOPS;
import static io.stasis.fs.linux.Confinement.lstat;
import static io.stasis.fs.linux.Confinement.openChildDirectory;
import static io.stasis.fs.linux.Confinement.refuseKernelView;
import static io.stasis.fs.linux.SandboxComponents.display;
import static io.stasis.fs.linux.SandboxComponents.isRootOrDotDot;
import static io.stasis.fs.linux.SandboxComponents.linkTarget;

import io.stasis.core.spi.FileOwner;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What a {@link ConfinedRoot} creates: directories with their missing parents, and new versions
 * of regular files renamed over the old ones once complete, all owned by the sandbox's root and
 * reached through confined lookups (a symlink in the way is followed inside the root, as the
 * kernel would for the sandbox).
 */
final class FileCreation {
    static final int DEFAULT_DIR_MODE = 0755;
    static final int DEFAULT_FILE_MODE = 0644;
    private static final int COPY_BUFFER = 64 * 1024;

    private final Confinement confinement;
    private final FileOwner owner;

    FileCreation(Confinement confinement, FileOwner owner) {
        this.confinement = confinement;
        this.owner = owner;
    }

    /** Creates a directory and its missing parents; returns the directory's inode. */
    Stat makeDirectories(List<String> comps, int mode) {
        try (Fd dir = ensureDirectory(comps, mode)) {
            return Syscalls.fstat(dir.value());
        }
    }

    /**
     * Writes a new version of a regular file from {@code content} and renames it over the old one
     * once complete; if {@code content} throws, the old file stays and the new one vanishes. A
     * symlink at the path is written through, confined. Returns the new inode.
     */
    Stat replaceFile(List<String> comps, InputStream content, OptionalInt mode, boolean fsync) throws IOException {
        List<String> target = comps;
        for (int hop = 0; hop <= MAX_SYMLINK_HOPS; hop++) {
            if (isRootOrDotDot(target)) throw new LinuxException(Errno.EISDIR, "write", display(comps));
            List<String> parentComps = target.subList(0, target.size() - 1);
            String name = target.getLast();
            refuseKernelView(target);
            try (Fd parent = ensureDirectory(parentComps, DEFAULT_DIR_MODE)) {
                confinement.refuseKernelViewIn(parent, name, comps);
                Optional<Stat> existing = lstat(parent, name);
                if (existing.isPresent() && existing.get().isSymlink()) {
                    // write through the link: resolve its target again from the root, confined
                    target = linkTarget(parentComps, Syscalls.readlinkat(parent.value(), name));
                    continue;
                }
                if (existing.isPresent() && existing.get().isDirectory())
                    throw new LinuxException(Errno.EISDIR, "write", display(comps));
                if (existing.isPresent() && !existing.get().isRegularFile())
                    throw new LinuxException(Errno.EINVAL, "write", display(comps), "not a regular file");
                return writeNewVersion(parent, name, existing, content, mode, fsync);
            }
        }
        throw new LinuxException(Errno.ELOOP, "write", display(comps), "too many levels of symbolic links");
    }

    // --- directories ---

    /**
     * Opens the directory at {@code comps}, creating it and missing parents. Each step resolves
     * from the root again, so a symlinked component is followed inside the root, like the kernel
     * would for the sandbox; a dangling symlink in the way is followed too, and its target created.
     */
    private Fd ensureDirectory(List<String> comps, int mode) {
        return ensureDirectory(comps, mode, new SymlinkBudget());
    }

    private Fd ensureDirectory(List<String> comps, int mode, SymlinkBudget budget) {
        try {
            return confinement.openDirectory(comps);
        } catch (LinuxException e) {
            if (!e.is(Errno.ENOENT) || comps.isEmpty()) throw e;
        }
        String name = comps.getLast();
        List<String> parentComps = comps.subList(0, comps.size() - 1);
        if (name.equals("..")) {
            ensureDirectory(parentComps, DEFAULT_DIR_MODE, budget).close();
            return confinement.openDirectory(comps);
        }
        try (Fd parent = ensureDirectory(parentComps, DEFAULT_DIR_MODE, budget)) {
            try {
                Syscalls.mkdirat(parent.value(), name, mode);
            } catch (LinuxException e) {
                if (!e.is(Errno.EEXIST)) throw e;
                Optional<Stat> inTheWay = lstat(parent, name);
                if (inTheWay.isPresent() && inTheWay.get().isSymlink()) { // dangling: create where it points, inside the root
                    budget.spend(display(comps));
                    return ensureDirectory(linkTarget(parentComps, Syscalls.readlinkat(parent.value(), name)), mode, budget);
                }
                return openExistingDirectory(comps); // created meanwhile, or a file is in the way
            }
            Fd created = openChildDirectory(parent, name);
            try {
                Syscalls.fchown(created.value(), owner.uid(), owner.gid());
                Syscalls.fchmod(created.value(), mode); // the umask narrowed what mkdirat set
                return created;
            } catch (RuntimeException e) {
                created.close();
                throw e;
            }
        }
    }

    /** Symlinks one creation may follow, like the kernel's limit for one lookup. */
    private static final class SymlinkBudget {
        private int left = MAX_SYMLINK_HOPS;

        void spend(String path) {
            if (--left < 0) throw new LinuxException(Errno.ELOOP, "mkdirat", path, "too many levels of symbolic links");
        }
    }

    private Fd openExistingDirectory(List<String> comps) {
        try {
            return confinement.openDirectory(comps);
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT) || e.is(Errno.ENOTDIR))
                throw new LinuxException(Errno.EEXIST, "mkdirat", display(comps), "a file that is not a directory is in the way");
            throw e;
        }
    }

    private Stat writeNewVersion(Fd parent, String name, Optional<Stat> existing, InputStream content, OptionalInt mode,
                                 boolean fsync) throws IOException {
        int permissions = mode.orElse(existing.map(Stat::permissions).orElse(DEFAULT_FILE_MODE));
        int uid = existing.map(Stat::uid).orElse(owner.uid());
        int gid = existing.map(Stat::gid).orElse(owner.gid());
        try (TempFile temp = TempFile.createIn(parent)) {
            Syscalls.fchown(temp.fd(), uid, gid); // before writing: chown would clear setuid bits set earlier
            byte[] buffer = new byte[COPY_BUFFER];
            for (int n; (n = content.read(buffer)) != -1; ) Syscalls.write(temp.fd(), buffer, 0, n);
            Syscalls.fchmod(temp.fd(), permissions);
            if (fsync) Syscalls.fsync(temp.fd());
            temp.commitAs(name);
            return Syscalls.fstat(temp.fd());
        }
    }
}
