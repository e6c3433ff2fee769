package io.stasis.testkit.fake;

import io.stasis.core.spi.FileOwner;
import io.stasis.testkit.fake.TreeEntry.Kind;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Directory trees as the fakes keep roots, volumes and snapshots: read entry by entry, copied
 * whole (a fake's snapshot), owned by one user. Symlinks are never followed. Only directories,
 * regular files and symlinks are supported: anything else fails with an {@link IOException}.
 */
final class Trees {
    private static final int TYPE_MASK = 0170000;
    private static final int DIRECTORY = 0040000;
    private static final int FILE = 0100000;
    private static final int LINK = 0120000;
    private static final int SETUID_SETGID = 06000;

    private Trees() {
    }

    /** Every entry of the tree at {@code top}, parents before their children, names sorted. */
    static List<TreeEntry> entries(Path top) throws IOException {
        var entries = new ArrayList<TreeEntry>();
        collect(top, "", entries);
        return entries;
    }

    private static void collect(Path top, String path, List<TreeEntry> into) throws IOException {
        var entry = entry(resolve(top, path), path);
        into.add(entry);
        if (entry.kind() != Kind.DIRECTORY) return;
        List<String> names;
        try (Stream<Path> children = Files.list(resolve(top, path))) {
            names = children.map(child -> child.getFileName().toString()).sorted().toList();
        }
        for (String name : names) collect(top, path.isEmpty() ? name : path + "/" + name, into);
    }

    static TreeEntry entry(Path file, String path) throws IOException {
        Map<String, Object> attributes = Files.readAttributes(file, "unix:mode,uid,gid", LinkOption.NOFOLLOW_LINKS);
        int mode = (Integer) attributes.get("mode");
        Kind kind = switch (mode & TYPE_MASK) {
            case DIRECTORY -> Kind.DIRECTORY;
            case FILE -> Kind.FILE;
            case LINK -> Kind.LINK;
            default -> throw new IOException(file + " is not a file, a directory or a symlink: this store does not keep it");
        };
        String target = kind == Kind.LINK ? Files.readSymbolicLink(file).toString() : null;
        return new TreeEntry(path, kind, mode & 07777, (Integer) attributes.get("uid"), (Integer) attributes.get("gid"), target);
    }

    static Path resolve(Path top, String path) {
        return path.isEmpty() ? top : top.resolve(path);
    }

    /** Copies the tree {@code from} to {@code to}, which must not exist, with modes and owners. */
    static void copy(Path from, Path to) throws IOException {
        var directories = new ArrayList<TreeEntry>();
        for (var entry : entries(from)) {
            Path target = resolve(to, entry.path());
            switch (entry.kind()) {
                case DIRECTORY -> {
                    Files.createDirectory(target);
                    directories.add(entry);
                }
                case FILE -> {
                    Files.copy(resolve(from, entry.path()), target, LinkOption.NOFOLLOW_LINKS);
                    applyMetadata(target, entry);
                }
                case LINK -> {
                    Files.createSymbolicLink(target, Path.of(entry.linkTarget()));
                    applyMetadata(target, entry);
                }
            }
        }
        applyDirectoryMetadata(to, directories);
    }

    /**
     * Owners and modes of directories, deepest first, once everything is in them: a directory
     * without write permission would have refused its own entries.
     */
    static void applyDirectoryMetadata(Path top, List<TreeEntry> directories) throws IOException {
        for (var entry : directories.reversed()) applyMetadata(resolve(top, entry.path()), entry);
    }

    /** Owner first: a change of owner clears setuid and setgid, which the mode then puts back. */
    static void applyMetadata(Path file, TreeEntry entry) throws IOException {
        setOwner(file, entry.uid(), entry.gid());
        if (entry.kind() != Kind.LINK) Files.setAttribute(file, "unix:mode", entry.mode(), LinkOption.NOFOLLOW_LINKS);
    }

    /** lchown, only where the owner differs: a process that is not root can still give a file to itself. */
    static void setOwner(Path file, int uid, int gid) throws IOException {
        Map<String, Object> now = Files.readAttributes(file, "unix:uid,gid", LinkOption.NOFOLLOW_LINKS);
        if ((Integer) now.get("uid") != uid) Files.setAttribute(file, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        if ((Integer) now.get("gid") != gid) Files.setAttribute(file, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
    }

    /** Gives every entry of a tree to {@code owner}, keeping setuid and setgid bits. Returns the sum of file sizes. */
    static long chown(Path top, FileOwner owner) throws IOException {
        long bytes = 0;
        for (var entry : entries(top)) {
            Path file = resolve(top, entry.path());
            setOwner(file, owner.uid(), owner.gid());
            if (entry.kind() != Kind.LINK && (entry.mode() & SETUID_SETGID) != 0)
                Files.setAttribute(file, "unix:mode", entry.mode(), LinkOption.NOFOLLOW_LINKS);
            if (entry.kind() == Kind.FILE) bytes += Files.size(file);
        }
        return bytes;
    }
}
