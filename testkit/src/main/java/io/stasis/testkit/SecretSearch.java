package io.stasis.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;

/** Looks for a secret's bytes where it must not be: files on the host, process memory, environments. */
public final class SecretSearch {
    private SecretSearch() {
    }

    /**
     * The regular files below {@code root} that hold {@code value} (UTF-8). Symlinks are not
     * followed and mounts below {@code root} are not entered (a bucket's files are not the host's).
     */
    public static List<Path> filesHolding(Path root, String value) throws IOException {
        var skip = new HashSet<Path>();
        for (String m : HostLeaks.mountsUnder(root)) skip.add(Path.of(m));
        skip.remove(root.toAbsolutePath().normalize());
        var out = new ArrayList<Path>();
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                return skip.contains(dir.toAbsolutePath().normalize()) ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (!attrs.isRegularFile()) return FileVisitResult.CONTINUE;
                try {
                    if (contains(Files.readAllBytes(file), value)) out.add(file);
                } catch (IOException e) {
                    // gone meanwhile, or unreadable: not holding it
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                return FileVisitResult.CONTINUE;
            }
        });
        return out;
    }

    public static boolean contains(byte[] haystack, String value) {
        return indexOf(haystack, value.getBytes(StandardCharsets.UTF_8)) >= 0;
    }

    public static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) if (haystack[i + j] != needle[j]) continue outer;
            return i;
        }
        return -1;
    }
}
