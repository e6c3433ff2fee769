package io.stasis.templates.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.host.FileTrees;
import io.stasis.templates.BaseTemplate;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fidelity on a real root filesystem: the base template's cached Debian tree (12,000 members:
 * hard links, symlinks, setgid files, group owners), its /dev device nodes deleted, applied as one
 * layer, must equal what GNU tar extracts from it as root, owners shifted by the id map base. Skipped
 * where the base template was never built on this machine.
 */
@Tag("root")
class DebianRootfsImportIT {
    static final FileOwner BASE = new FileOwner(100000, 100000);

    @TempDir
    Path work;

    @AfterEach
    void quietly() throws IOException {
        FileTrees.deleteContents(work); // JUnit warns about every absolute symlink in a Debian tree
    }

    @Test
    void aDebianTreeAppliesAsGnuTarExtractsIt() throws IOException {
        Path cache = new BaseTemplate().cacheFile();
        assumeTrue(Files.isRegularFile(cache) && cache.toString().endsWith(".zst"), "no base template cache at " + cache);
        Path tar = work.resolve("rootfs.tar");
        HostTools.run("zstd", "-q", "-d", "-o", tar.toString(), cache.toString());
        HostTools.run("tar", "--delete", "--file", tar.toString(), "--wildcards", "./dev/*");
        Path expected = Files.createDirectories(work.resolve("expected"));
        HostTools.run("tar", "--extract", "--file", tar.toString(), "--directory", expected.toString(), "--numeric-owner", "--same-owner",
                "--same-permissions", "--xattrs", "--xattrs-include=*");
        Path actual = Files.createDirectories(work.resolve("actual"));
        var layer = new Layer(sha256(tar), ImageJson.ARCHIVE_LAYER, Files.size(tar), new SpooledBlob(tar, Files.size(tar), sha256(tar)));

        long start = System.nanoTime();
        var report = new LayerApplier(BASE, LayerApplier.Limits.DEFAULT).apply(actual, List.of(layer), TemplateRecipe.Progress.NONE);
        long ms = (System.nanoTime() - start) / 1_000_000;
        System.out.printf("TIMING apply debian rootfs: %d entries, %d bytes in %d ms%n", report.entries(), report.bytes(), ms);

        var want = describe(expected, 0);
        var got = describe(actual, BASE.uid());
        assertThat(got.keySet()).isEqualTo(want.keySet());
        var differences = new ArrayList<String>();
        for (var e : want.entrySet()) if (!e.getValue().equals(got.get(e.getKey()))) differences.add(e.getKey() + ": " + e.getValue() + " vs " + got.get(e.getKey()));
        assertThat(differences).as("entries that differ (expected vs applied)").isEmpty();
        assertThat(report.entries()).isGreaterThan(10_000);
    }

    /** Type, mode, owner (minus the shift), size, mtime, link count, link target and content hash of every entry, by path. */
    private static Map<String, String> describe(Path top, int shift) throws IOException {
        var out = new TreeMap<String, String>();
        Files.walkFileTree(top, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) throws IOException {
                out.put(top.relativize(d) + "/", entry(d, shift));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) throws IOException {
                out.put(top.relativize(f).toString(), entry(f, shift));
                return FileVisitResult.CONTINUE;
            }
        });
        return out;
    }

    private static String entry(Path p, int shift) throws IOException {
        Map<String, Object> a = Files.readAttributes(p, "unix:mode,uid,gid,size,nlink,lastModifiedTime", LinkOption.NOFOLLOW_LINKS);
        int mode = (int) a.get("mode");
        boolean link = (mode & 0170000) == 0120000;
        boolean file = (mode & 0170000) == 0100000;
        return String.join(" ", Integer.toOctalString(mode), ((int) a.get("uid") - shift) + ":" + ((int) a.get("gid") - shift),
                file ? a.get("size").toString() : "-", Integer.toString((int) a.get("nlink")), a.get("lastModifiedTime").toString(),
                link ? Files.readSymbolicLink(p).toString() : "-", file ? hash(p) : "-");
    }

    private static String hash(Path p) {
        return sha256(p).hex().substring(0, 16);
    }

    private static Digest sha256(Path p) {
        MessageDigest sha = Digest.sha256();
        try (InputStream in = Files.newInputStream(p)) {
            byte[] buffer = new byte[1 << 16];
            for (int n; (n = in.read(buffer)) != -1; ) sha.update(buffer, 0, n);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return Digest.of(sha);
    }
}
