package io.stasis.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What a directory tree holds, entry by entry, to compare two trees in a test (a root and its
 * snapshot, a volume and what a stream made of it): for each relative path its type, mode and
 * owner, a file's SHA-256 and a symlink's target. Times are left out. Symlinks are not followed.
 */
public final class TreeContents {
    private static final int TYPE_MASK = 0170000;
    private static final int DIRECTORY = 0040000;
    private static final int FILE = 0100000;
    private static final int LINK = 0120000;

    private TreeContents() {
    }

    /** Relative path ({@code ""} for {@code top} itself) to a description such as {@code file 0644 0:0 <sha256>}. */
    public static SortedMap<String, String> of(Path top) {
        var contents = new TreeMap<String, String>();
        try (Stream<Path> all = Files.walk(top)) {
            for (Path path : all.toList()) contents.put(top.relativize(path).toString(), describe(path));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return contents;
    }

    private static String describe(Path path) throws IOException {
        Map<String, Object> a = Files.readAttributes(path, "unix:mode,uid,gid", LinkOption.NOFOLLOW_LINKS);
        int mode = (Integer) a.get("mode");
        String owner = a.get("uid") + ":" + a.get("gid");
        String permissions = String.format("%04o", mode & 07777);
        return switch (mode & TYPE_MASK) {
            case DIRECTORY -> "dir " + permissions + " " + owner;
            case FILE -> "file " + permissions + " " + owner + " " + sha256(path);
            case LINK -> "link " + owner + " -> " + Files.readSymbolicLink(path);
            default -> String.format("other %06o %s", mode, owner);
        };
    }

    private static String sha256(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            var digest = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[64 << 10];
            for (int n; (n = in.read(buffer)) > 0; ) digest.update(buffer, 0, n);
            return HexFormat.of().formatHex(digest.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
