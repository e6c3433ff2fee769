package io.stasis.templates.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Examples of what {@link TarReader} reads and refuses; the round trips and fuzzing are in {@link TarReaderPropertyTest}. */
class TarReaderTest {
    @TempDir
    Path dir;

    @Test
    void paxRecordsOverrideTheHeaderAndCarryBinaryXattrs() {
        byte[] capability = {1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        String longName = "usr/" + "d".repeat(150) + "/ping";
        byte[] archive = new TarBuilder()
                .pax(Map.of("path", longName.getBytes(StandardCharsets.UTF_8), "uid", "3000000".getBytes(StandardCharsets.UTF_8),
                        "gid", "7".getBytes(StandardCharsets.UTF_8), "mtime", "1700000000.25".getBytes(StandardCharsets.UTF_8),
                        "SCHILY.xattr.security.capability", capability, "SCHILY.xattr.user.empty", new byte[0]))
                .file("short-name", "ping".getBytes(StandardCharsets.UTF_8))
                .end().bytes();

        var entries = readAll(archive);

        assertThat(entries).hasSize(1);
        var e = entries.getFirst().entry();
        assertThat(e.name()).isEqualTo(longName);
        assertThat(e.uid()).isEqualTo(3_000_000);
        assertThat(e.gid()).isEqualTo(7);
        assertThat(e.mtime()).isEqualTo(Instant.ofEpochSecond(1_700_000_000L, 250_000_000));
        assertThat(e.xattrs()).containsOnlyKeys("security.capability", "user.empty");
        assertThat(e.xattrs().get("security.capability")).isEqualTo(capability);
        assertThat(entries.getFirst().content()).isEqualTo("ping".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void globalHeadersApplyToEveryLaterMemberButNotTheirPath() {
        byte[] data = TarBuilder.paxData(Map.of("uid", "42".getBytes(StandardCharsets.UTF_8), "path", "ignored".getBytes(StandardCharsets.UTF_8)));
        byte[] archive = new TarBuilder()
                .header("global", 'g', data.length, 0644, 0, 0, 0, "").data(data)
                .file("a", new byte[0]).dir("b/").end().bytes();

        var entries = readAll(archive);

        assertThat(entries).extracting(r -> r.entry().name()).containsExactly("a", "b/");
        assertThat(entries).allSatisfy(r -> assertThat(r.entry().uid()).isEqualTo(42));
    }

    @Test
    void gnuLongNamesLinksAndEveryKindAreReported() {
        String longName = "x/".repeat(120) + "file";
        byte[] archive = new TarBuilder()
                .longName(longName).file("truncated-name", "abc".getBytes(StandardCharsets.UTF_8))
                .dir("etc/")
                .symlink("etc/link", "/etc/passwd")
                .header("etc/hard", '1', 0, 0644, 0, 0, 0, "etc/link")
                .device("dev/null", '3', 1, 3)
                .device("dev/sda", '4', 8, 0)
                .header("run/fifo", '6', 0, 0600, 0, 0, 0, "")
                .end().bytes();

        var kinds = readAll(archive).stream().map(r -> r.entry().name() + " " + r.entry().kind()).toList();

        assertThat(kinds).containsExactly(
                longName + " RegularFile[size=3]",
                "etc/ Directory[]",
                "etc/link Symlink[target=/etc/passwd]",
                "etc/hard HardLink[target=etc/link]",
                "dev/null CharDevice[major=1, minor=3]",
                "dev/sda BlockDevice[major=8, minor=0]",
                "run/fifo Fifo[]");
    }

    @Test
    void gnuTarsOwnDevicesFifosAndHugeNumbersReadBack() throws IOException {
        Path tree = Files.createDirectories(dir.resolve("tree"));
        HostTools.run("mkfifo", "-m", "0640", tree.resolve("fifo").toString());
        Files.writeString(tree.resolve("f"), "x");
        Files.setLastModifiedTime(tree.resolve("f"), java.nio.file.attribute.FileTime.from(Instant.ofEpochSecond(9_000_000_000L)));
        Path archive = HostTools.tar(tree, dir.resolve("a.tar"), "gnu", "--owner=3000000", "--group=2999999");
        Path devices = dir.resolve("d.tar");
        HostTools.run("tar", "--create", "--file", devices.toString(), "--format=gnu", "--numeric-owner", "--absolute-names", "/dev/null");

        var entries = readAll(read(archive));
        var null_ = readAll(read(devices)).getFirst().entry();

        var fifo = entries.stream().filter(r -> r.entry().name().equals("./fifo")).findFirst().orElseThrow().entry();
        assertThat(fifo.kind()).isInstanceOf(TarEntry.Fifo.class);
        assertThat(fifo.mode()).isEqualTo(0640);
        var f = entries.stream().filter(r -> r.entry().name().equals("./f")).findFirst().orElseThrow().entry();
        assertThat(f.uid()).as("base-256").isEqualTo(3_000_000);
        assertThat(f.gid()).isEqualTo(2_999_999);
        assertThat(f.mtime().getEpochSecond()).as("base-256 beyond 8^11").isEqualTo(9_000_000_000L);
        assertThat(null_.name()).isEqualTo("/dev/null");
        assertThat(null_.kind()).isEqualTo(new TarEntry.CharDevice(1, 3));
    }

    @Test
    void oversizedExtendedHeadersAreRefusedBeforeTheyAreRead() {
        byte[] hugePax = new TarBuilder().header("PaxHeaders/x", 'x', 2L << 20, 0644, 0, 0, 0, "").bytes(); // no data follows: never read
        byte[] longGnuName = new TarBuilder().longName("a".repeat(5000)).file("a", new byte[0]).end().bytes();
        byte[] longPaxPath = new TarBuilder().paxText(Map.of("path", "b/".repeat(2100))).file("b", new byte[0]).end().bytes();
        var manyPax = new TarBuilder();
        for (int i = 0; i < 3; i++) manyPax.paxText(Map.of("comment", "c".repeat(400_000)));
        byte[] tooMuchPax = manyPax.file("c", new byte[0]).end().bytes();

        assertRefused(hugePax, ImageException.Reason.TOO_LARGE, "tar header at byte 0", "pax header of 2097152 bytes");
        assertRefused(longGnuName, ImageException.Reason.TOO_LARGE, "tar header at byte 0", "GNU long name");
        assertRefused(longPaxPath, ImageException.Reason.TOO_LARGE, "tar header at byte 5120", "longer than 4096 bytes");
        assertRefused(tooMuchPax, ImageException.Reason.TOO_LARGE, "tar header at byte", "over the limit of 1048576");
    }

    @Test
    void aMemberOverTheSizeLimitIsRefusedNamingIt() {
        byte[] archive = new TarBuilder().header("big.bin", '0', (1L << 33) - 1, 0644, 0, 0, 0, "").bytes();

        assertThatThrownBy(() -> readAll(new TarReader(new ByteArrayInputStream(archive), 1 << 30)))
                .isInstanceOfSatisfying(ImageException.class, e -> {
                    assertThat(e.reason()).isEqualTo(ImageException.Reason.TOO_LARGE);
                    assertThat(e.subject()).isEqualTo("tar entry 'big.bin'");
                    assertThat(e).hasMessageContaining("8589934591 bytes, over the limit of 1073741824");
                });
    }

    @Test
    void damagedArchivesAreRefusedSayingWhere() {
        byte[] good = new TarBuilder().file("a", "hello".getBytes(StandardCharsets.UTF_8)).file("b", new byte[700]).end().bytes();
        byte[] badChecksum = good.clone();
        badChecksum[512 + 512 + 3] ^= 1; // a byte of b's header
        byte[] truncated = java.util.Arrays.copyOf(good, 512 + 512 + 512 + 100);
        byte[] sparse = new TarBuilder().header("s", 'S', 0, 0644, 0, 0, 0, "").end().bytes();
        byte[] notUtf8 = new TarBuilder().file("caf\u00e9", new byte[0]).end().bytes();
        notUtf8[3] = (byte) 0xe9; // Latin-1 é where UTF-8 has two bytes
        TarBuilder.checksum(notUtf8, 0);

        assertRefused(badChecksum, ImageException.Reason.MALFORMED, "tar header at byte 1024", "checksum mismatch");
        assertRefused(truncated, ImageException.Reason.MALFORMED, "tar entry 'b'", "ends inside this member");
        assertRefused(sparse, ImageException.Reason.UNSUPPORTED, "tar entry 's'", "sparse");
        assertRefused(notUtf8, ImageException.Reason.UNSUPPORTED, "tar header at byte 0", "not UTF-8");
        assertThat(readAll(good)).extracting(r -> r.entry().name()).containsExactly("a", "b");
    }

    @Test
    void theArchiveEndsAtAZeroBlockOrWhereAHeaderWouldStart() {
        byte[] noTrailer = new TarBuilder().file("a", new byte[3]).bytes();
        byte[] junkAfterEnd = new TarBuilder().file("a", new byte[3]).end().data("junk".getBytes(StandardCharsets.UTF_8)).bytes();
        byte[] paxWithoutMember = new TarBuilder().paxText(Map.of("path", "x")).bytes();

        assertThat(readAll(noTrailer)).hasSize(1);
        assertThat(readAll(junkAfterEnd)).hasSize(1);
        assertThat(readAll(new byte[0])).isEmpty();
        assertRefused(paxWithoutMember, ImageException.Reason.MALFORMED, "tar header at byte 1024", "ends after an extended header");
    }

    @Test
    void anUnreadMemberIsSkippedAndAFailingStreamBecomesAnImageException() {
        byte[] archive = new TarBuilder().file("a", new byte[5000]).file("b", "b".getBytes(StandardCharsets.UTF_8)).end().bytes();
        var reader = new TarReader(new ByteArrayInputStream(archive));
        reader.next();
        var b = reader.next().orElseThrow();
        assertThat(b.name()).isEqualTo("b");

        var failing = new TarReader(new java.io.InputStream() {
            @Override
            public int read() throws IOException {
                throw new IOException("disk on fire");
            }
        });
        assertThatThrownBy(failing::next).isInstanceOfSatisfying(ImageException.class,
                e -> assertThat(e.reason()).isEqualTo(ImageException.Reason.IO)).hasMessageContaining("disk on fire");
    }

    // ---

    record Read(TarEntry entry, byte[] content) {
    }

    static List<Read> readAll(byte[] archive) {
        return readAll(new TarReader(new ByteArrayInputStream(archive)));
    }

    static List<Read> readAll(TarReader reader) {
        var out = new ArrayList<Read>();
        for (var e = reader.next(); e.isPresent(); e = reader.next()) {
            try {
                out.add(new Read(e.get(), reader.content().readAllBytes()));
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }
        return out;
    }

    /** Reads every member and all its data, keeping nothing. */
    static int drain(byte[] archive) {
        var reader = new TarReader(new ByteArrayInputStream(archive));
        int count = 0;
        for (var e = reader.next(); e.isPresent(); e = reader.next()) {
            try {
                reader.content().transferTo(OutputStream.nullOutputStream());
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            count++;
        }
        return count;
    }

    private static byte[] read(Path file) throws IOException {
        return Files.readAllBytes(file);
    }

    private static void assertRefused(byte[] archive, ImageException.Reason reason, String subjectStart, String message) {
        assertThatThrownBy(() -> drain(archive)).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(reason);
            assertThat(e.subject()).startsWith(subjectStart);
            assertThat(e.getMessage()).contains(message);
        });
    }
}
