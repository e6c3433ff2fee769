package io.stasis.fs.linux;

import static io.stasis.fs.linux.SandboxComponents.display;
import static io.stasis.fs.linux.SandboxComponents.isRootOrDotDot;
import static io.stasis.fs.linux.SandboxComponents.linkTarget;
import static io.stasis.fs.linux.Syscalls.AT_SYMLINK_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.O_CLOEXEC;
import static io.stasis.fs.linux.Syscalls.O_DIRECTORY;
import static io.stasis.fs.linux.Syscalls.O_NOCTTY;
import static io.stasis.fs.linux.Syscalls.O_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.O_PATH;
import static io.stasis.fs.linux.Syscalls.O_RDONLY;
import static io.stasis.fs.linux.Syscalls.RESOLVE_BENEATH;
import static io.stasis.fs.linux.Syscalls.RESOLVE_IN_ROOT;
import static io.stasis.fs.linux.Syscalls.RESOLVE_NO_MAGICLINKS;
import static io.stasis.fs.linux.Syscalls.RESOLVE_NO_SYMLINKS;
import static io.stasis.fs.linux.Syscalls.RESOLVE_NO_XDEV;

import io.stasis.core.files.SandboxPath;
import io.stasis.fs.linux.ConfinedRoot.Entry;
import java.util.List;
import java.util.Optional;

/**
 * How a {@link ConfinedRoot} reaches what a sandbox path names: every lookup is an
 * {@code openat2} from the root's fd confined to it ({@code RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS}), and refused in or below a kernel view (/proc, /sys, /dev), however it
 * is reached. The fds it hands out are the base of all later work, so a component swapped for a
 * symlink between check and use cannot redirect it.
 */
final class Confinement implements AutoCloseable {
    /** Resolution for a sandbox path: {@code /} and {@code ..} stop at the root, no magic links. */
    static final long IN_ROOT = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    /** Resolution for one name in a directory fd: no symlink, no {@code ..} above it, no other mount. */
    static final long ONE_NAME = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    /** Like the kernel's own limit on symlinks followed in one lookup. */
    static final int MAX_SYMLINK_HOPS = 40;

    /**
     * Where the sandbox sees kernel filesystems (procfs, sysfs, the runtime's /dev), mounted over
     * directories of the root. What the root holds there is hidden from the sandbox, so a write
     * there would succeed without the sandbox ever seeing it: these are refused.
     */
    static final List<String> KERNEL_VIEWS = List.of("proc", "sys", "dev");

    private final Fd root;
    private final Stat rootStat;
    /** The root's directories under {@link #KERNEL_VIEWS} (those that are directories, not symlinks). */
    private final List<Stat> kernelViews;

    Confinement(Fd root) {
        this.root = root;
        this.rootStat = Syscalls.fstat(root.value());
        this.kernelViews = KERNEL_VIEWS.stream().flatMap(name -> lstat(root, name).stream()).filter(Stat::isDirectory).toList();
    }

    @Override
    public void close() {
        root.close();
    }

    /** A directory fd opened confined, and one name in it (never {@code ..}; {@code .} for the root). */
    record Location(Fd dir, String name) implements AutoCloseable {
        @Override
        public void close() {
            dir.close();
        }
    }

    /**
     * The directory holding the last component, opened confined, and that component. A path
     * ending in {@code ..} (or the root) becomes the directory itself with name {@code .}: a bare
     * {@code ..} relative to a directory fd would not be clamped to the root.
     */
    Location locate(List<String> comps) {
        if (isRootOrDotDot(comps)) return new Location(openDirectory(comps), ".");
        refuseKernelView(comps);
        Fd dir = openDirectory(comps.subList(0, comps.size() - 1));
        try {
            refuseKernelViewIn(dir, comps.getLast(), comps);
            return new Location(dir, comps.getLast());
        } catch (RuntimeException e) {
            dir.close();
            throw e;
        }
    }

    /** Opens a directory for reading and as a base for *at calls; symlinks followed inside the root. */
    Fd openDirectory(List<String> comps) {
        return confined(comps, O_RDONLY | O_DIRECTORY | O_CLOEXEC, true);
    }

    /** An O_PATH fd on what the path names; {@code followLast} false leaves a final symlink unfollowed. */
    Fd openPath(List<String> comps, boolean followLast) {
        return confined(comps, O_PATH | O_CLOEXEC | (followLast ? 0 : O_NOFOLLOW), followLast);
    }
    /** openat2 of a sandbox path, confined to the root and refused in or below a kernel view, however it is reached. */
    private Fd confined(List<String> comps, int flags, boolean followLast) {
        refuseKernelView(comps);
        Fd fd;
        try {
            fd = new Fd(Syscalls.openat2(root.value(), display(comps), flags, 0, IN_ROOT));
        } catch (LinuxException e) {
            // Missing in a kernel view is refused as being there, not reported missing.
            if (e.is(Errno.ENOENT) || e.is(Errno.ENOTDIR)) refuseThroughDirectory(comps, followLast);
            throw e;
        }
        try {
            if (Syscalls.fstat(fd.value()).isDirectory()) refuseBelowKernelView(fd, comps);
            else refuseThroughDirectory(comps, followLast);
            return fd;
        } catch (RuntimeException e) {
            fd.close();
            throw e;
        }
    }

    /** A path that names a kernel view or lies below one, as written ({@code ..} clamped at the root like the kernel does). */
    static void refuseKernelView(List<String> comps) {
        var normalized = new SandboxPath(display(comps)).normalized();
        for (String view : KERNEL_VIEWS)
            if (normalized.equals("/" + view) || normalized.startsWith("/" + view + "/")) throw kernelView(comps);
    }

    /** A kernel view's own name in the root, reached through a symlink to the root ({@code /root/up/proc}). */
    void refuseKernelViewIn(Fd dir, String name, List<String> comps) {
        if (KERNEL_VIEWS.contains(name) && Syscalls.fstat(dir.value()).sameInode(rootStat)) throw kernelView(comps);
    }

    /**
     * For a path that is not a directory (or is missing): its directory is checked, and where a
     * final symlink leads, again. A sandbox that swaps links meanwhile can at most reach the root's
     * hidden directories this way, never outside the root (every lookup stays confined).
     */
    private void refuseThroughDirectory(List<String> comps, boolean followLast) {
        List<String> target = comps;
        for (int hop = 0; hop <= MAX_SYMLINK_HOPS && !isRootOrDotDot(target); hop++) {
            refuseKernelView(target);
            List<String> parentComps = target.subList(0, target.size() - 1);
            String name = target.getLast();
            Fd parent;
            try {
                parent = new Fd(Syscalls.openat2(root.value(), display(parentComps), O_PATH | O_DIRECTORY | O_CLOEXEC, 0, IN_ROOT));
            } catch (LinuxException e) {
                return; // no directory to be in: the caller's own error stands
            }
            try (parent) {
                refuseBelowKernelView(parent, comps);
                refuseKernelViewIn(parent, name, comps);
                if (!followLast) return;
                var link = lstat(parent, name).filter(Stat::isSymlink);
                if (link.isEmpty()) return;
                target = linkTarget(parentComps, Syscalls.readlinkat(parent.value(), name));
            }
        }
    }

    /** A directory in or below a kernel view, found by walking up through {@code ..} to the root, which confined lookups stay below. */
    private void refuseBelowKernelView(Fd dir, List<String> comps) {
        if (kernelViews.isEmpty()) return;
        Stat stat = Syscalls.fstat(dir.value());
        Fd current = null;
        try {
            for (int depth = 0; depth <= SandboxPath.MAX_LENGTH / 2; depth++) {
                if (stat.sameInode(rootStat)) return;
                for (Stat view : kernelViews) if (stat.sameInode(view)) throw kernelView(comps);
                Fd parent = new Fd(Syscalls.openat2((current == null ? dir : current).value(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0));
                if (current != null) current.close();
                current = parent;
                Stat above = Syscalls.fstat(current.value());
                if (above.sameInode(stat)) return; // the host's own root: not below this sandbox's (cannot happen confined)
                stat = above;
            }
        } finally {
            if (current != null) current.close();
        }
    }

    private static LinuxException kernelView(List<String> comps) {
        return new LinuxException(Errno.EACCES, "openat2", display(comps),
                "/proc, /sys and /dev are the kernel's views inside the sandbox, mounted over the root's own directories,"
                        + " which the files API does not reach (run a command to read them)");
    }

    /** An O_PATH fd on a regular file (symlinks followed inside the root); never opens a device or FIFO. */
    Fd openRegular(List<String> comps) {
        Fd fd = openPath(comps, true);
        try {
            Stat stat = Syscalls.fstat(fd.value());
            if (stat.isDirectory()) throw new LinuxException(Errno.EISDIR, "open", display(comps));
            if (!stat.isRegularFile()) throw new LinuxException(Errno.EINVAL, "open", display(comps), "not a regular file");
            return fd;
        } catch (RuntimeException e) {
            fd.close();
            throw e;
        }
    }

    /** Reopens the inode behind an O_PATH fd with real access flags (regular files, and FIFOs to write to). */
    static Fd reopen(Fd pathFd, int flags) {
        return new Fd(Syscalls.open(pathFd.procPath(), flags | O_CLOEXEC | O_NOCTTY));
    }

    /** A subdirectory of {@code dir} by name, refusing a symlink or mount point in its place. */
    static Fd openChildDirectory(Fd dir, String name) {
        return new Fd(Syscalls.openat2(dir.value(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0, ONE_NAME));
    }

    static Optional<Stat> lstat(Fd dir, String name) {
        try {
            return Optional.of(Syscalls.statx(dir.value(), name, AT_SYMLINK_NOFOLLOW));
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT)) return Optional.empty();
            throw e;
        }
    }

    static Optional<Entry> entry(Fd dir, String name) {
        try {
            Stat stat = Syscalls.statx(dir.value(), name, AT_SYMLINK_NOFOLLOW);
            Optional<String> target = stat.isSymlink() ? Optional.of(Syscalls.readlinkat(dir.value(), name)) : Optional.empty();
            return Optional.of(new Entry(name, stat, target));
        } catch (LinuxException e) {
            if (e.is(Errno.ENOENT)) return Optional.empty();
            throw e;
        }
    }
}
