/**
 * Host-side file access to sandbox root filesystems that cannot be steered outside the root.
 *
 * <h2>Mechanism</h2>
 * {@link io.stasis.fs.linux.ConfinedRoot} opens a sandbox root once ({@code O_PATH|O_DIRECTORY})
 * and resolves every caller path with {@code openat2(rootfd, path, ..., RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS)}: the kernel treats the root as {@code /} for {@code ..} and for
 * absolute symlinks, refuses {@code /proc} magic links, and aborts a lookup (EAGAIN, retried)
 * that a concurrent rename could have let escape. Everything after that lookup works on the
 * resulting directory fds with single names ({@code mkdirat}, {@code unlinkat},
 * {@code renameat2}, {@code statx(AT_SYMLINK_NOFOLLOW)}, {@code openat2} with
 * {@code RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS}), so nothing is resolved twice and swapping a
 * component for a symlink between check and use changes nothing. All of it needs Linux 5.6+.
 * FFM code lives only in {@link io.stasis.fs.linux.Syscalls}.
 *
 * <h2>Watching</h2>
 * {@link io.stasis.fs.linux.InotifyFileWatcher} reports changes under a sandbox path with
 * inotify. Directories are opened the same confined way and inotify is given only their
 * {@code /proc/self/fd/N} link; below the watched directory nothing is resolved through a
 * symlink or across a mount, so a watch can never be steered outside the root.
 *
 * <h2>What it defends against</h2>
 * A sandbox that controls the whole content of its root, changes it concurrently with host
 * calls, and a caller that chooses any path: {@code ..} chains, absolute and relative symlinks
 * and chains of them, symlinked parents, {@code /proc/self/root}-style magic links (even with a
 * procfs visible inside the root), directories swapped for symlinks mid-call or mid-walk.
 * Reads never open a FIFO or device node (the path is pinned with {@code O_PATH}, checked to be
 * a regular file, and only then reopened through {@code /proc/self/fd}). Recursive deletion
 * never follows a symlink and never crosses a mount point.
 *
 * <h2>What it does not defend against</h2>
 * <ul>
 *   <li>Hard links the root already contains to host files (a sandbox cannot create them; a
 *       template built from host files could).</li>
 *   <li>Mounts the host itself placed inside the root: lookups cross them (deletion does not).</li>
 *   <li>Resource use: a sandbox can make directories huge or trees deep; listing loads a whole
 *       directory, and recursive deletion refuses trees deeper than
 *       1024 levels.</li>
 *   <li>Names that are not UTF-8 are decoded lossily in listings and watch events and cannot be
 *       addressed back.</li>
 *   <li>A sandbox can make its own watches end (overflowing the kernel queue, or growing a tree
 *       past the directory limit); the caller starts again. It cannot affect other watches.</li>
 * </ul>
 */
package io.stasis.fs.linux;
