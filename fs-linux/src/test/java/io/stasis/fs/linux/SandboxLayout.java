package io.stasis.fs.linux;

import io.stasis.core.spi.FileOwner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * A sandbox root and, next to it, a host directory the sandbox must never reach: {@code base/root}
 * and {@code base/outside}, the latter holding canaries named like the files the tests touch
 * inside, so that any escape would read, list, change or delete one of them.
 */
final class SandboxLayout {
    static final FileOwner OWNER = new FileOwner(100000, 100000);
    static final String CANARY = "CANARY-OUTSIDE-SECRET";
    static final String INSIDE = "inside-content";
    /** A name that only exists outside: listing it means a listing escaped. */
    static final String OUTSIDE_ONLY = "only-outside-marker";

    final Path base;
    final Path root;
    final Path outside;

    SandboxLayout(Path base) {
        this.base = base;
        this.root = base.resolve("root");
        this.outside = base.resolve("outside");
        try {
            Files.createDirectories(root);
            Files.createDirectories(outside.resolve("m/deeper"));
            for (String name : new String[] {"canary", "w", "w2", "new", "moved", "f", OUTSIDE_ONLY})
                Files.writeString(outside.resolve(name), CANARY);
            Files.writeString(outside.resolve("m/x"), CANARY);
            Files.writeString(outside.resolve("m/deeper/y"), CANARY);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Fills the root with ways out: symlinks (absolute, relative, chained, deep climbs) to the
     * outside directory, /etc and the canaries, a symlink loop, and a directory {@code /d} with
     * files named like the outside ones.
     */
    void plantTraps() throws IOException {
        String outsideAbs = outside.toString();
        write("d/canary", INSIDE);
        write("d/f", INSIDE);
        symlink("out-abs", outsideAbs);
        symlink("out-rel", "../outside");
        symlink("a/b/chain", "../../l2");
        symlink("l2", "../outside");
        symlink("d/up", "../..");
        symlink("deep", "../../../../../../../../../../../../../../" + outsideFromSlash());
        symlink("etc-abs", "/etc");
        symlink("canary-abs", outsideAbs + "/canary");
        symlink("canary-rel", "../outside/canary");
        symlink("sock-abs", outsideAbs + "/sock");
        symlink("loop1", "loop2");
        symlink("loop2", "loop1");
    }

    /** Empties the root (never following a link) so traps can be planted afresh. */
    void clearRoot() throws IOException {
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Files.delete(file);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
                if (e != null) throw e;
                if (!dir.equals(root)) Files.delete(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }

    /** The outside directory's absolute host path without the leading slash, for deep '..' climbs. */
    String outsideFromSlash() {
        return outside.toAbsolutePath().toString().substring(1);
    }

    Path inRoot(String relative) {
        return root.resolve(relative);
    }

    void write(String relative, String content) throws IOException {
        Path p = root.resolve(relative);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }

    void symlink(String relative, String target) throws IOException {
        Path p = root.resolve(relative);
        Files.createDirectories(p.getParent());
        Files.createSymbolicLink(p, Path.of(target));
    }

    /**
     * Everything observable about the outside tree, without following links: type, size, mode,
     * owner, mtime and a content hash for each entry. Equal snapshots mean nothing was created,
     * modified, moved, re-owned or deleted there.
     */
    Map<String, String> snapshotOutside() {
        var out = new TreeMap<String, String>();
        try {
            Files.walkFileTree(outside, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                    out.put(outside.relativize(dir).toString() + "/", describe(dir));
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    out.put(outside.relativize(file).toString(), describe(file));
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    private static String describe(Path p) throws IOException {
        var a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        String hash = a.isRegularFile() ? sha256(Files.readAllBytes(p)) : "-";
        return String.join(" ", a.isDirectory() ? "d" : a.isRegularFile() ? "f" : a.isSymbolicLink() ? "l" : "o",
                Long.toString(a.size()), PosixFilePermissions.toString(a.permissions()), a.owner().getName(),
                a.lastModifiedTime().toString(), hash);
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
