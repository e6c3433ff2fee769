package io.stasis.templates.oci;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;

/**
 * {@link TarReader} against GNU tar: random trees (names with spaces and non-ASCII, long paths
 * and link targets, modes with setuid, huge owners and times, hard links, user xattrs) archived
 * by GNU tar in gnu, pax and ustar format read back exactly as they were written. And whatever
 * bytes it is given (random, or a real archive with bytes flipped, headers re-checksummed so the
 * damage gets past the checksum, or cut short) it throws nothing but {@link ImageException}.
 */
class TarReaderPropertyTest {
    private static final String ALPHABET = "abcxyz0129 -_.#=%\\\u00e9\u65e5\u672c\u2603";
    private Path work;

    @BeforeProperty
    void makeWorkDir() throws IOException {
        work = Files.createTempDirectory("tar-reader-property-");
    }

    @AfterProperty
    void removeWorkDir() throws IOException {
        io.stasis.host.FileTrees.deleteRecursively(work);
    }

    // --- round trips ---

    /** One step of building a tree: what to make, in which existing directory, named how. */
    record Step(int kind, int parent, String name, byte[] content, int mode, long mtime, String linkTarget, boolean xattr) {
    }

    record Case(String format, List<Step> steps, long uid, long gid) {
    }

    @Provide
    Arbitrary<Case> trees() {
        return Arbitraries.of("gnu", "pax", "ustar").flatMap(format -> {
            boolean ustar = format.equals("ustar");
            Arbitrary<String> names = Arbitraries.strings().withChars(ALPHABET.toCharArray()).ofMinLength(1).ofMaxLength(ustar ? 12 : 60)
                    .filter(n -> !n.equals(".") && !n.equals("..") && n.getBytes(StandardCharsets.UTF_8).length <= 200);
            Arbitrary<byte[]> contents = Arbitraries.oneOf(
                    Arbitraries.bytes().array(byte[].class).ofMaxSize(3000),
                    Arbitraries.integers().between(60_000, 70_000).map(n -> new byte[n]));
            Arbitrary<Integer> modes = Arbitraries.of(0644, 0600, 0755, 0700, 04755, 02755, 0444, 01777);
            Arbitrary<Long> mtimes = ustar ? Arbitraries.longs().between(0, 077777777777L)
                    : Arbitraries.oneOf(Arbitraries.longs().between(0, 2_000_000_000L), Arbitraries.longs().between(8_589_934_592L, 9_200_000_000L));
            Arbitrary<String> targets = Arbitraries.strings().withChars((ALPHABET + "/").toCharArray()).ofMinLength(1)
                    .ofMaxLength(ustar ? 90 : 400).filter(t -> !ustar || t.getBytes(StandardCharsets.UTF_8).length <= 100);
            Arbitrary<Step> steps = Combinators.combine(Arbitraries.integers().between(0, 4), Arbitraries.integers().between(0, 1000), names,
                    contents, modes, mtimes, targets, Arbitraries.of(true, false)).as(Step::new);
            Arbitrary<Long> ids = ustar ? Arbitraries.longs().between(0, 2_097_151) : Arbitraries.longs().between(0, Integer.MAX_VALUE);
            return Combinators.combine(steps.list().ofMinSize(1).ofMaxSize(25), ids, ids).as((s, uid, gid) -> new Case(format, s, uid, gid));
        });
    }

    record Expected(String kind, String hash, int mode, long mtime, String link, Map<String, String> xattrs) {
    }

    @Property(tries = 60)
    void gnuTarArchivesReadBackAsWritten(@ForAll("trees") Case c) throws IOException {
        Path each = Files.createTempDirectory(work, "try-");
        try {
            roundTrip(c, each);
        } finally {
            io.stasis.host.FileTrees.deleteRecursively(each);
        }
    }

    private static void roundTrip(Case c, Path each) throws IOException {
        Path tree = Files.createDirectories(each.resolve("tree"));
        var expected = materialize(tree, c);
        var options = new ArrayList<>(List.of("--owner=" + c.uid(), "--group=" + c.gid()));
        if (c.format().equals("pax")) options.addAll(List.of("--xattrs", "--xattrs-include=user.*"));
        Path archive = HostTools.tar(tree, each.resolve("a.tar"), c.format(), options.toArray(String[]::new));

        var actual = new TreeMap<String, Expected>();
        var names = new HashMap<String, String>(); // hash of each regular file read, by name: hard links point back into it
        var reader = new TarReader(new ByteArrayInputStream(Files.readAllBytes(archive)));
        for (var next = reader.next(); next.isPresent(); next = reader.next()) {
            TarEntry e = next.get();
            String name = strip(e.name());
            assertThat(e.uid()).isEqualTo(c.uid());
            assertThat(e.gid()).isEqualTo(c.gid());
            if (name.isEmpty()) continue; // the root "./"
            var xattrs = new TreeMap<String, String>();
            e.xattrs().forEach((k, v) -> xattrs.put(k, HexFormat.of().formatHex(v)));
            Expected got = switch (e.kind()) {
                case TarEntry.RegularFile f -> {
                    byte[] data = reader.content().readAllBytes();
                    assertThat((long) data.length).isEqualTo(f.size());
                    names.put(name, sha(data));
                    yield new Expected("file", sha(data), e.mode(), e.mtime().getEpochSecond(), "", xattrs);
                }
                case TarEntry.HardLink h -> {
                    assertThat(names).as("a hard link points to an earlier member").containsKey(strip(h.target()));
                    yield new Expected("file", names.get(strip(h.target())), -1, -1, "", Map.of());
                }
                case TarEntry.Directory d -> new Expected("dir", "", e.mode(), e.mtime().getEpochSecond(), "", xattrs);
                case TarEntry.Symlink s -> new Expected("symlink", "", -1, -1, s.target(), Map.of());
                default -> throw new AssertionError("unexpected " + e);
            };
            actual.put(name, got);
        }
        // hard links carry no metadata of their own: compare them by content only
        expected.replaceAll((name, exp) -> actual.containsKey(name) && actual.get(name).mode() == -1 && exp.kind().equals("file")
                ? new Expected("file", exp.hash(), -1, -1, "", Map.of()) : exp);
        assertThat(actual).isEqualTo(expected);
    }

    /** Builds the tree the steps describe and returns what the archive must hold, by path. */
    private static TreeMap<String, Expected> materialize(Path tree, Case c) throws IOException {
        var dirs = new ArrayList<String>(List.of(""));
        var files = new ArrayList<String>();
        var expected = new TreeMap<String, Expected>();
        var modes = new HashMap<String, Integer>();
        for (Step s : c.steps()) {
            String parent = dirs.get(s.parent() % dirs.size());
            String path = parent.isEmpty() ? s.name() : parent + "/" + s.name();
            if (expected.containsKey(path) || path.getBytes(StandardCharsets.UTF_8).length > (c.format().equals("ustar") ? 90 : 1000)) continue;
            Path p = tree.resolve(path);
            boolean xattr = s.xattr() && c.format().equals("pax") && s.content().length > 0;
            switch (s.kind()) {
                case 0, 1 -> {
                    Files.write(p, s.content());
                    var xattrs = xattr ? setXattr(p, s.content()) : Map.<String, String>of();
                    expected.put(path, new Expected("file", sha(s.content()), s.mode(), s.mtime(), "", xattrs));
                    modes.put(path, s.mode() & ~01000);
                    files.add(path);
                }
                case 2 -> {
                    Files.createDirectory(p);
                    var xattrs = xattr ? setXattr(p, s.content()) : Map.<String, String>of();
                    expected.put(path, new Expected("dir", "", s.mode(), s.mtime(), "", xattrs));
                    modes.put(path, s.mode() | 0700); // root could write anyway; keep the tree deletable by anyone
                    dirs.add(path);
                }
                case 3 -> {
                    Files.createSymbolicLink(p, Path.of(s.linkTarget())); // Path.of drops doubled and trailing slashes
                    expected.put(path, new Expected("symlink", "", -1, -1, Files.readSymbolicLink(p).toString(), Map.of()));
                }
                default -> {
                    if (files.isEmpty()) continue;
                    String target = files.get(s.parent() % files.size());
                    Files.createLink(p, tree.resolve(target));
                    expected.put(path, expected.get(target));
                }
            }
        }
        for (var e : expected.entrySet()) {
            if (e.getValue().kind().equals("symlink")) continue;
            Path p = tree.resolve(e.getKey());
            Files.setAttribute(p, "unix:mode", modes.getOrDefault(e.getKey(), e.getValue().mode()) & 07777, LinkOption.NOFOLLOW_LINKS);
            Files.setLastModifiedTime(p, FileTime.from(Instant.ofEpochSecond(e.getValue().mtime())));
        }
        // what the tree really holds (a sticky bit asked on a file is dropped by the kernel for non-root? not for root: read back)
        for (var e : expected.entrySet()) {
            if (e.getValue().kind().equals("symlink")) continue;
            int mode = (int) Files.getAttribute(tree.resolve(e.getKey()), "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
            var v = e.getValue();
            e.setValue(new Expected(v.kind(), v.hash(), mode, v.mtime(), v.link(), v.xattrs()));
        }
        return expected;
    }

    private static Map<String, String> setXattr(Path p, byte[] value) throws IOException {
        byte[] v = Arrays.copyOf(value, Math.min(value.length, 200));
        Files.getFileAttributeView(p, UserDefinedFileAttributeView.class, LinkOption.NOFOLLOW_LINKS).write("test", ByteBuffer.wrap(v));
        return Map.of("user.test", HexFormat.of().formatHex(v));
    }

    private static String strip(String name) {
        String n = name.startsWith("./") ? name.substring(2) : name.equals(".") ? "" : name;
        return n.endsWith("/") ? n.substring(0, n.length() - 1) : n;
    }

    private static String sha(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    // --- nothing but ImageException ---

    @Property(tries = 2000)
    void arbitraryBytesAreReadOrRefusedWithImageExceptionOnly(@ForAll @Size(max = 3000) byte[] bytes, @ForAll boolean withHeader) {
        if (withHeader && bytes.length >= 512) { // a plausible header so the parser gets past the checksum
            TarBuilder.checksum(bytes, 0);
        }
        onlyImageExceptions(bytes);
    }

    @Property(tries = 2000)
    void damagedRealArchivesAreReadOrRefusedWithImageExceptionOnly(@ForAll @IntRange(min = 0, max = 2) int sample,
                                                                   @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 1 << 20) Integer> positions,
                                                                   @ForAll byte flip, @ForAll boolean fixChecksums, @ForAll @IntRange(min = 0, max = 1 << 20) int cut) {
        byte[] original = Samples.ARCHIVES.get(sample);
        byte[] damaged = original.clone();
        for (int at : positions) damaged[at % damaged.length] ^= (flip == 0 ? 1 : flip);
        if (fixChecksums) for (int header : Samples.HEADERS.get(sample)) TarBuilder.checksum(damaged, header);
        if (cut % 3 == 0) damaged = Arrays.copyOf(damaged, cut % damaged.length);
        onlyImageExceptions(damaged);
    }

    private static void onlyImageExceptions(byte[] bytes) {
        try {
            TarReaderTest.drain(bytes);
        } catch (ImageException expected) {
            assertThat(expected.getMessage()).isNotBlank();
            assertThat(expected.subject()).isNotBlank();
        } catch (UncheckedIOException e) {
            throw new AssertionError("an IOException escaped", e);
        }
    }

    /** Real archives to damage: hand-made with pax, GNU long names and every kind, and two GNU tar made ones. */
    static final class Samples {
        static final List<byte[]> ARCHIVES;
        static final List<List<Integer>> HEADERS;

        static {
            try {
                Path dir = Files.createTempDirectory("tar-samples-");
                try {
                    Path tree = Files.createDirectories(dir.resolve("t/sub/" + "deep".repeat(30)));
                    Files.writeString(dir.resolve("t/sub/file"), "content ".repeat(300));
                    Files.writeString(tree.resolve("long"), "x");
                    Files.createSymbolicLink(dir.resolve("t/link"), Path.of("/" + "target/".repeat(30)));
                    Files.createLink(dir.resolve("t/hard"), dir.resolve("t/sub/file"));
                    byte[] gnu = Files.readAllBytes(HostTools.tar(dir.resolve("t"), dir.resolve("gnu.tar"), "gnu", "--owner=3000000"));
                    byte[] pax = Files.readAllBytes(HostTools.tar(dir.resolve("t"), dir.resolve("pax.tar"), "pax", "--mtime=@9000000000"));
                    byte[] handmade = new TarBuilder()
                            .paxText(Map.of("path", "p/" + "n".repeat(200), "mtime", "1.5", "SCHILY.xattr.user.a", "v"))
                            .file("x", "data".getBytes(StandardCharsets.UTF_8))
                            .longName("l/".repeat(80)).file("y", new byte[600])
                            .dir("d/").symlink("s", "/etc").header("h", '1', 0, 0644, 0, 0, 0, "x")
                            .device("c", '3', 1, 3).header("f", '6', 0, 0600, 0, 0, 0, "").end().bytes();
                    ARCHIVES = List.of(handmade, gnu, pax);
                    HEADERS = ARCHIVES.stream().map(Samples::headerOffsets).toList();
                } finally {
                    io.stasis.host.FileTrees.deleteRecursively(dir);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Where the headers of an undamaged archive are: after each one, its data rounded up to a block. */
        static List<Integer> headerOffsets(byte[] archive) {
            var out = new ArrayList<Integer>();
            int at = 0;
            while (at + 512 <= archive.length && archive[at] != 0) {
                out.add(at);
                long size = Long.parseLong(new String(archive, at + 124, 11, StandardCharsets.US_ASCII).trim(), 8);
                at += 512 + (int) ((size + 511) / 512 * 512);
            }
            return out;
        }
    }
}
