package io.stasis.templates.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.fs.linux.ConfinedRoot;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.UserDefinedFileAttributeView;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LayerApplier} on real layers made by GNU tar from trees this test builds as root (owners,
 * setuid bits, capabilities, device nodes), and on hand-made hostile ones: every rule of the OCI
 * layer changeset, and no write, chown or delete ever reaching outside the root.
 */
@Tag("root")
class LayerApplierIT {
    static final FileOwner BASE = new FileOwner(100000, 100000);
    static final Instant T0 = Instant.parse("2020-01-02T03:04:05Z");

    @TempDir
    Path work;
    Path root;
    Path outside;
    TestLayers layers;
    Map<String, String> outsideBefore;
    LayerApplier applier = new LayerApplier(BASE, LayerApplier.Limits.DEFAULT);

    @BeforeEach
    void layout() throws IOException {
        root = Files.createDirectories(work.resolve("root"));
        outside = Files.createDirectories(work.resolve("outside"));
        Files.writeString(outside.resolve("canary"), "CANARY");
        Files.writeString(outside.resolve("x"), "CANARY");
        layers = new TestLayers(Files.createDirectories(work.resolve("layers")));
        outsideBefore = TestLayers.snapshot(outside);
    }

    @AfterEach
    void nothingOutsideChanged() {
        assertThat(TestLayers.snapshot(outside)).as("the host directory beside the root").isEqualTo(outsideBefore);
    }

    LayerApplier.Report apply(Layer... ls) {
        return applier.apply(root, List.of(ls), TemplateRecipe.Progress.NONE);
    }

    // --- the changeset rules ---

    @Test
    void whiteoutsDeleteWhatLowerLayersLeftButNeverTheirOwnLayersEntries() throws IOException {
        Path lower = layers.source();
        write(lower, "a/file1", "1");
        write(lower, "a/file2", "2");
        write(lower, "b/dir/x", "x");
        write(lower, "-same", "lower");
        Path upper = layers.source();
        write(upper, "a/.wh.file1", "");
        write(upper, ".wh.b", "");
        write(upper, ".wh.missing", "");
        byte[] sameLayer = new TarBuilder().file("-same", "upper".getBytes(StandardCharsets.UTF_8)) // then its whiteout, in one layer
                .file(".wh.-same", new byte[0]).end().bytes();

        apply(layers.of(lower), layers.of(upper), layers.layer(sameLayer));

        assertThat(root.resolve("a/file1")).doesNotExist();
        assertThat(root.resolve("a/file2")).hasContent("2");
        assertThat(root.resolve("b")).doesNotExist();
        assertThat(root.resolve("a/.wh.file1")).as("whiteouts are not materialised").doesNotExist();
        assertThat(root.resolve("-same")).as("a whiteout hides lower layers only").hasContent("upper");
    }

    @Test
    void anOpaqueDirectoryKeepsOnlyWhatItsOwnLayerWrote() throws IOException {
        Path lower = layers.source();
        write(lower, "d/old", "old");
        write(lower, "d/sub/old2", "old");
        write(lower, "e/old", "old");
        write(lower, "keep", "keep");
        Path upper = layers.source();
        write(upper, "d/.wh..wh..opq", "");
        write(upper, "d/new", "new");
        byte[] opaqueLast = new TarBuilder().dir("e/").file("e/new", "new".getBytes(StandardCharsets.UTF_8)).file("e/.wh..wh..opq", new byte[0])
                .end().bytes();

        apply(layers.of(lower), layers.of(upper), layers.layer(opaqueLast));

        assertThat(names(root.resolve("d"))).containsExactly("new");
        assertThat(names(root.resolve("e"))).as("the opaque marker after the layer's own entries").containsExactly("new");
        assertThat(root.resolve("keep")).hasContent("keep");
    }

    @Test
    void membersReplaceWhatIsThereButADirectoryStaysADirectory() throws IOException {
        Path lower = layers.source();
        write(lower, "was-dir/inner", "x");
        write(lower, "was-file", "x");
        write(lower, "dir/kept", "kept");
        Path upper = layers.source();
        write(upper, "was-dir", "now a file");
        Files.createDirectories(upper.resolve("was-file"));
        Files.createDirectories(upper.resolve("dir"));
        Files.setAttribute(upper.resolve("dir"), "unix:mode", 0700);

        apply(layers.of(lower), layers.of(upper));

        assertThat(root.resolve("was-dir")).hasContent("now a file");
        assertThat(root.resolve("was-file")).isDirectory();
        assertThat(root.resolve("dir/kept")).hasContent("kept");
        assertThat(mode(root.resolve("dir"))).isEqualTo(0700);
    }

    @Test
    void ownersAreShiftedIntoTheSandboxAndSetuidBitsStay() throws IOException {
        Path src = layers.source();
        write(src, "usr/bin/su", "elf");
        Files.setAttribute(src.resolve("usr/bin/su"), "unix:mode", 04755);
        write(src, "home/user/notes", "mine");
        chown(src.resolve("home/user"), 1000, 1000);
        chown(src.resolve("home/user/notes"), 1000, 1001);
        Files.setAttribute(src.resolve("home/user"), "unix:mode", 02770);
        Files.createSymbolicLink(src.resolve("home/user/link"), Path.of("/etc/passwd"));
        chown(src.resolve("home/user/link"), 1000, 0);
        HostTools.run("mkfifo", "-m", "0620", src.resolve("run-fifo").toString());

        apply(layers.of(src));

        assertThat(owner(root.resolve("usr/bin/su"))).isEqualTo("100000:100000");
        assertThat(mode(root.resolve("usr/bin/su"))).isEqualTo(04755);
        assertThat(owner(root.resolve("home/user"))).isEqualTo("101000:101000");
        assertThat(mode(root.resolve("home/user"))).isEqualTo(02770);
        assertThat(owner(root.resolve("home/user/notes"))).isEqualTo("101000:101001");
        assertThat(owner(root.resolve("home/user/link"))).isEqualTo("101000:100000");
        assertThat(Files.readSymbolicLink(root.resolve("home/user/link"))).isEqualTo(Path.of("/etc/passwd"));
        assertThat(Files.getAttribute(root.resolve("run-fifo"), "unix:mode", LinkOption.NOFOLLOW_LINKS)).isEqualTo(010620);
        assertThat(owner(root)).as("the root's own entry ./").isEqualTo("100000:100000");
    }

    @Test
    void theRootBelongsToTheSandboxEvenWithoutADotEntryAndAsTheDotEntrySays() throws IOException {
        apply(layers.layer(new TarBuilder().file("f", new byte[1]).end().bytes()));
        assertThat(owner(root)).isEqualTo("100000:100000");
        assertThat(mode(root)).isEqualTo(0755);

        apply(layers.layer(new TarBuilder().header("./", '5', 0, 0750, 5, 6, 0, "").end().bytes()));
        assertThat(owner(root)).isEqualTo("100005:100006");
        assertThat(mode(root)).isEqualTo(0750);
    }

    @Test
    void fileCapabilitiesLandNamespacedAndOtherXattrsAsThePolicySays() throws IOException {
        Path src = layers.source();
        write(src, "bin/ping", "elf");
        Files.setAttribute(src.resolve("bin/ping"), "unix:mode", 0755);
        if (HostTools.installed("setcap")) HostTools.run("setcap", "cap_net_raw+ep", src.resolve("bin/ping").toString());
        else try (var tree = ConfinedRoot.open(src, new FileOwner(0, 0))) { // what setcap writes: v2, effective, CAP_NET_RAW permitted
            tree.setXattr("/bin/ping", "security.capability", new byte[] {1, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
        }
        Files.getFileAttributeView(src.resolve("bin/ping"), UserDefinedFileAttributeView.class).write("note", ByteBuffer.wrap("hi".getBytes()));
        byte[] trusted = new TarBuilder().pax(Map.of("SCHILY.xattr.trusted.overlay.opaque", "y".getBytes(StandardCharsets.UTF_8)))
                .file("marked", new byte[0]).end().bytes();

        var report = apply(layers.of(src), layers.layer(trusted));

        try (var confined = ConfinedRoot.open(root, BASE)) {
            byte[] cap = confined.xattr("/bin/ping", "security.capability").orElseThrow();
            var le = ByteBuffer.wrap(cap).order(ByteOrder.LITTLE_ENDIAN);
            assertThat(cap).hasSize(24);
            assertThat(le.getInt(0)).as("revision 3, effective").isEqualTo(0x03000001);
            assertThat(le.getInt(4)).as("permitted: CAP_NET_RAW (13)").isEqualTo(1 << 13);
            assertThat(le.getInt(20)).as("root id: the sandbox's root").isEqualTo(100000);
            assertThat(confined.xattr("/bin/ping", "user.note")).hasValue("hi".getBytes());
            assertThat(confined.xattr("/marked", "trusted.overlay.opaque")).isEmpty();
        }
        if (HostTools.installed("getcap"))
            assertThat(HostTools.run("getcap", "-n", root.resolve("bin/ping").toString())).contains("cap_net_raw=ep").contains("[rootid=100000]");
        assertThat(report.skipped()).anySatisfy(s -> {
            assertThat(s.path()).isEqualTo("/marked");
            assertThat(s.reason()).startsWith("trusted.overlay.opaque: trusted.* attributes belong to the host's root");
        });
    }

    @Test
    void hardLinksLinkInsideTheRootAcrossLayers() throws IOException {
        Path lower = layers.source();
        write(lower, "usr/bin/python3.11", "py");
        Files.createLink(lower.resolve("usr/bin/python3"), lower.resolve("usr/bin/python3.11"));
        byte[] upper = new TarBuilder().header("usr/bin/python", '1', 0, 0644, 0, 0, 0, "usr/bin/python3.11").end().bytes();

        apply(layers.of(lower), layers.layer(upper));

        assertThat(Files.isSameFile(root.resolve("usr/bin/python3"), root.resolve("usr/bin/python3.11"))).isTrue();
        assertThat(Files.isSameFile(root.resolve("usr/bin/python"), root.resolve("usr/bin/python3.11"))).isTrue();
        assertThat(Files.getAttribute(root.resolve("usr/bin/python"), "unix:nlink")).isEqualTo(3);
    }

    @Test
    void timesAreSetDirectoriesOnceAllLayersAreIn() throws IOException {
        Path lower = layers.source();
        write(lower, "etc/hostname", "h");
        Files.createSymbolicLink(lower.resolve("etc/link"), Path.of("hostname"));
        setTime(lower.resolve("etc/hostname"), T0);
        setTime(lower.resolve("etc"), T0.plusSeconds(60));
        Files.getFileAttributeView(lower.resolve("etc/link"), java.nio.file.attribute.BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setTimes(FileTime.from(T0.plusSeconds(5)), null, null);
        Path upper = layers.source();
        write(upper, "etc/added", "a"); // changes /etc's time when written...
        setTime(upper.resolve("etc"), T0.plusSeconds(120)); // ...but the layer says this

        apply(layers.of(lower), layers.of(upper));

        assertThat(Files.getLastModifiedTime(root.resolve("etc/hostname"))).isEqualTo(FileTime.from(T0));
        assertThat(Files.getLastModifiedTime(root.resolve("etc/link"), LinkOption.NOFOLLOW_LINKS)).isEqualTo(FileTime.from(T0.plusSeconds(5)));
        assertThat(Files.getLastModifiedTime(root.resolve("etc"))).isEqualTo(FileTime.from(T0.plusSeconds(120)));
    }

    // --- escapes ---

    @Test
    void aSymlinkThenAFileBelowItNeverWritesOutside() throws IOException {
        byte[] plant = new TarBuilder().symlink("etc", outside.toString()).symlink("rel", "../../../../../../.." + outside).end().bytes();
        byte[] thenWrite = new TarBuilder().file("etc/x", "pwned".getBytes(StandardCharsets.UTF_8)).end().bytes();
        byte[] thenRelative = new TarBuilder().file("rel/canary", "pwned".getBytes(StandardCharsets.UTF_8)).end().bytes();

        assertThatThrownBy(() -> apply(layers.layer(plant), layers.layer(thenWrite))).as("the link leads nowhere inside the root")
                .isInstanceOfSatisfying(ImageException.class, e -> assertThat(e.subject()).endsWith("entry 'etc/x'"));
        assertThatThrownBy(() -> apply(layers.layer(thenRelative))).isInstanceOf(ImageException.class);

        byte[] target = new TarBuilder().dir(outside.toString().substring(1) + "/").end().bytes(); // the same path inside the root
        apply(layers.layer(target), layers.layer(thenWrite), layers.layer(thenRelative));
        assertThat(root.resolve(outside.toString().substring(1)).resolve("x")).hasContent("pwned");
        assertThat(root.resolve(outside.toString().substring(1)).resolve("canary")).hasContent("pwned");
    }

    @Test
    void aFileOverASymlinkReplacesTheLinkNotItsTarget() {
        byte[] plant = new TarBuilder().symlink("passwd", outside.resolve("canary").toString()).dir("d/").symlink("d/up", "../../..")
                .end().bytes();
        byte[] overwrite = new TarBuilder().file("passwd", "root:x:0:0".getBytes(StandardCharsets.UTF_8))
                .header("passwd2", '1', 0, 0644, 0, 0, 0, "passwd").end().bytes();
        byte[] hardLinkOut = new TarBuilder().header("h", '1', 0, 0644, 0, 0, 0, "d/up/" + outside.toString().substring(1) + "/canary").end().bytes();

        apply(layers.layer(plant), layers.layer(overwrite));

        assertThat(root.resolve("passwd")).isRegularFile().hasContent("root:x:0:0");
        assertThat(Files.isSymbolicLink(root.resolve("d/up"))).isTrue();
        assertThatThrownBy(() -> apply(layers.layer(hardLinkOut))).as("a hard link's target is resolved inside the root")
                .isInstanceOfSatisfying(ImageException.class, e -> assertThat(e.getMessage()).contains("which is not in the root"));
    }

    @Test
    void dotDotAbsoluteNamesAndDevicesAreRefusedNamingTheEntry() throws IOException {
        Path devices = layers.source();
        HostTools.run("mknod", devices.resolve("null").toString(), "c", "1", "3");

        assertRefused(new TarBuilder().file("../evil", new byte[1]).end().bytes(), "'../evil'", "'..' climbs out of the root");
        assertRefused(new TarBuilder().file("a/../../evil", new byte[1]).end().bytes(), "'a/../../evil'", "'..' climbs out of the root");
        assertRefused(new TarBuilder().file("/etc/passwd", new byte[1]).end().bytes(), "'/etc/passwd'", "an absolute path");
        assertRefused(new TarBuilder().header("h", '1', 0, 0644, 0, 0, 0, "../../outside/canary").end().bytes(), "'h'",
                "its link target '../../outside/canary' is '..' climbs out");
        assertRefused(new TarBuilder().device("dev/sda", '4', 8, 0).end().bytes(), "'dev/sda'", "a block device (8,0)");
        assertThatThrownBy(() -> apply(layers.of(devices))).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(ImageException.Reason.REFUSED);
            assertThat(e.subject()).endsWith("entry './null'");
            assertThat(e).hasMessageContaining("a character device (1,3)");
        });
        apply(layers.layer(new TarBuilder().file("a/../fine", new byte[1]).end().bytes()));
        assertThat(root.resolve("fine")).exists();
        assertThat(outside.resolve("evil")).doesNotExist();
        assertThat(work.resolve("evil")).doesNotExist();
    }

    @Test
    void ownersOutsideTheMappedRangeAndLimitsAreRefused() {
        byte[] bigUid = new TarBuilder().header("f", '0', 0, 0644, 70000, 0, 0, "").end().bytes();
        var small = new LayerApplier(BASE, new LayerApplier.Limits(3, 100, 150));

        assertRefused(bigUid, "'f'", "owner 70000:0 is outside the ids 0-65535 a sandbox maps");
        assertThatThrownBy(() -> small.apply(root, List.of(layers.layer(new TarBuilder().file("big", new byte[101]).end().bytes())),
                TemplateRecipe.Progress.NONE)).isInstanceOfSatisfying(ImageException.class, e -> {
                    assertThat(e.reason()).isEqualTo(ImageException.Reason.TOO_LARGE);
                    assertThat(e.subject()).startsWith("layer sha256:").endsWith("entry 'big'");
                });
        assertThatThrownBy(() -> small.apply(root, List.of(layers.layer(new TarBuilder().file("a", new byte[100]).file("b", new byte[100])
                .end().bytes())), TemplateRecipe.Progress.NONE)).hasMessageContaining("more than 150 bytes");
        assertThatThrownBy(() -> small.apply(root, List.of(layers.layer(new TarBuilder().dir("1/").dir("2/").dir("3/").dir("4/").end().bytes())),
                TemplateRecipe.Progress.NONE)).hasMessageContaining("more than 3 entries");
    }

    // ---

    private void assertRefused(byte[] layer, String entry, String message) {
        assertThatThrownBy(() -> apply(layers.layer(layer))).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(ImageException.Reason.REFUSED);
            assertThat(e.subject()).startsWith("layer sha256:").endsWith("entry " + entry);
            assertThat(e.getMessage()).contains(message);
        });
    }

    private static void write(Path tree, String relative, String content) throws IOException {
        Path p = tree.resolve(relative);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }

    private static void chown(Path p, int uid, int gid) throws IOException {
        Files.setAttribute(p, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(p, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
    }

    private static void setTime(Path p, Instant t) throws IOException {
        Files.setLastModifiedTime(p, FileTime.from(t));
    }

    private static String owner(Path p) throws IOException {
        return Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS) + ":" + Files.getAttribute(p, "unix:gid", LinkOption.NOFOLLOW_LINKS);
    }

    private static int mode(Path p) throws IOException {
        return (int) Files.getAttribute(p, "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
    }

    private static List<String> names(Path dir) throws IOException {
        try (var s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
