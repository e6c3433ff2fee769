package io.stasis.templates.oci;

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
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;

/** Layers for the applier's tests: GNU tar of a source tree the test builds, or bytes from {@link TarBuilder}, as spooled {@link Layer}s. */
final class TestLayers {
    private final Path dir;
    private final AtomicInteger counter = new AtomicInteger();

    TestLayers(Path dir) {
        this.dir = dir;
    }

    /** A fresh source directory to build a layer's tree in. */
    Path source() {
        try {
            return Files.createDirectories(dir.resolve("src-" + counter.incrementAndGet()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** GNU tar (pax, sorted by name, every xattr, numeric owners) of {@code tree}, gzip-compressed as registries serve layers. */
    Layer of(Path tree) {
        Path tar = HostTools.tar(tree, dir.resolve("layer-" + counter.incrementAndGet() + ".tar"), "pax",
                "--sort=name", "--xattrs", "--xattrs-include=*");
        try {
            return layer(TestImages.gzip(Files.readAllBytes(tar)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A layer of these tar bytes (as given: plain or compressed). */
    Layer layer(byte[] bytes) {
        try {
            Path file = Files.write(dir.resolve("blob-" + counter.incrementAndGet()), bytes);
            Digest digest = Digest.of(bytes);
            return new Layer(digest, "application/vnd.oci.image.layer.v1.tar", bytes.length, new SpooledBlob(file, bytes.length, digest));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Everything observable about a tree without following links: type, size, mode, owner, mtime per entry. */
    static Map<String, String> snapshot(Path top) {
        var out = new TreeMap<String, String>();
        try {
            Files.walkFileTree(top, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                    out.put(top.relativize(d) + "/", describe(d));
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                    out.put(top.relativize(f).toString(), describe(f));
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
        String content = a.isRegularFile() ? Integer.toHexString(java.util.Arrays.hashCode(Files.readAllBytes(p))) : "-";
        return String.join(" ", a.isDirectory() ? "d" : a.isRegularFile() ? "f" : a.isSymbolicLink() ? "l" : "o", Long.toString(a.size()),
                PosixFilePermissions.toString(a.permissions()), a.owner().getName(), a.lastModifiedTime().toString(), content);
    }
}
