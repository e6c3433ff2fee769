package io.stasis.fs.linux;

import static io.stasis.fs.linux.SandboxLayout.CANARY;
import static io.stasis.fs.linux.SandboxLayout.OWNER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.spi.FileOwner;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tree-building calls of {@link ConfinedRoot} (what image layers are applied with): each acts
 * on the named entry itself, never through a final symlink, and a symlink above it, planted
 * earlier, never leads outside the root. Needs root for owners, FIFOs and capabilities.
 */
@Tag("root")
class ConfinedRootTreeIT {
    static final FileOwner USER = new FileOwner(101000, 101000);

    @TempDir
    Path base;
    SandboxLayout layout;
    ConfinedRoot root;
    Map<String, String> outsideBefore;

    @BeforeEach
    void open() throws IOException {
        layout = new SandboxLayout(base);
        layout.plantTraps();
        outsideBefore = layout.snapshotOutside();
        root = ConfinedRoot.open(layout.root, OWNER);
    }

    @AfterEach
    void close() {
        root.close();
        assertThat(layout.snapshotOutside()).as("nothing outside the root changed").isEqualTo(outsideBefore);
    }

    @Test
    void aFileGetsItsOwnerThenItsModeSoSetuidStays() throws IOException {
        long written = root.createFile("/usr/bin/su", bytes("elf"), 04755, USER);

        assertThat(written).isEqualTo(3);
        var attrs = attributes("usr/bin/su");
        assertThat(attrs.owner().getName()).isEqualTo("101000");
        assertThat(Files.getAttribute(layout.inRoot("usr/bin/su"), "unix:mode", LinkOption.NOFOLLOW_LINKS)).isEqualTo(0100000 | 04755);
        assertThat(layout.inRoot("usr/bin/su")).hasContent("elf");
        assertThat(Files.getAttribute(layout.inRoot("usr"), "unix:uid")).as("missing parents belong to the root's owner").isEqualTo(OWNER.uid());
        assertThat(Files.getAttribute(layout.inRoot("usr/bin"), "unix:mode")).isEqualTo(040755);
    }

    @Test
    void aSymlinkedParentIsFollowedInsideTheRootOnly() throws IOException {
        root.createSymlink("/etc", layout.outside.toString(), OWNER); // what a hostile layer plants first
        assertThatThrownBy(() -> root.createFile("/etc/canary", bytes("inside"), 0644, USER)).as("dangling inside the root")
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("ENOENT"));
        root.mkdirs(layout.outside.toString(), 0755);
        root.createFile("/etc/canary", bytes("inside"), 0644, USER);
        root.createDirectory("/outside", 0755, OWNER);
        root.createFile("/out-rel/canary2", bytes("inside"), 0644, USER);

        assertThat(layout.outside.resolve("canary")).hasContent(CANARY);
        assertThat(layout.root.resolve(layout.outsideFromSlash()).resolve("canary")).hasContent("inside");
        assertThat(layout.root.resolve("outside/canary2")).as("../outside from the root is the root's /outside").hasContent("inside");
    }

    @Test
    void nothingIsCreatedThroughAFinalSymlink() {
        assertThatThrownBy(() -> root.createFile("/canary-abs", bytes("x"), 0644, USER))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("EEXIST"));
        assertThatThrownBy(() -> root.createDirectory("/out-abs", 0755, USER)).isInstanceOf(LinuxException.class);
        assertThatThrownBy(() -> root.createSymlink("/out-rel", "/x", USER)).isInstanceOf(LinuxException.class);
        assertThatThrownBy(() -> root.createFifo("/canary-rel", 0644, USER)).isInstanceOf(LinuxException.class);
    }

    @Test
    void attributesChangeTheSymlinkItselfNeverItsTarget() {
        root.setOwner("/canary-abs", USER);
        root.setMtime("/canary-abs", Instant.parse("2001-02-03T04:05:06Z"));

        assertThat(attributes("canary-abs").owner().getName()).isEqualTo("101000");
        assertThat(attributes("canary-abs").lastModifiedTime()).isEqualTo(FileTime.from(Instant.parse("2001-02-03T04:05:06Z")));
        assertThatThrownBy(() -> root.setMode("/canary-abs", 0777))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("EOPNOTSUPP"));
        assertThatThrownBy(() -> root.setXattr("/canary-abs", "user.x", bytes("v").readAllBytes()))
                .as("user attributes are not allowed on symlinks, and the target is not reached").isInstanceOf(LinuxException.class);
        assertThat(root.xattr("/canary-abs", "user.x")).isEmpty();
    }

    @Test
    void aHardLinkToASymlinkLinksTheSymlink() throws IOException {
        root.createHardLink("/second", "/canary-abs");
        root.createFile("/f", bytes("data"), 0600, USER);
        root.createHardLink("/g", "/f");

        assertThat(Files.isSymbolicLink(layout.inRoot("second"))).isTrue();
        assertThat(Files.readSymbolicLink(layout.inRoot("second"))).isEqualTo(layout.outside.resolve("canary"));
        assertThat(Files.isSameFile(layout.inRoot("f"), layout.inRoot("g"))).isTrue();
        assertThatThrownBy(() -> root.createHardLink("/h", "/out-abs/canary")).as("the existing name is resolved inside the root")
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("ENOENT"));
        assertThatThrownBy(() -> root.createHardLink("/h", "/d")).isInstanceOf(LinuxException.class);
    }

    @Test
    void fifosDirectoriesAndAttributesGetExactlyWhatIsAsked() throws IOException {
        root.createFifo("/run/pipe", 0620, USER);
        root.createDirectory("/tmp", 01777, USER);
        root.createFile("/bin/ping", bytes("elf"), 0755, OWNER);
        byte[] capNetRawV2 = {0, 0, 0, 2, 0, 0x20, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        root.setXattr("/bin/ping", "security.capability", capNetRawV2);
        root.setXattr("/tmp", "user.note", bytes("hello").readAllBytes());

        assertThat(Files.getAttribute(layout.inRoot("run/pipe"), "unix:mode", LinkOption.NOFOLLOW_LINKS)).isEqualTo(010620);
        assertThat(Files.getAttribute(layout.inRoot("tmp"), "unix:mode", LinkOption.NOFOLLOW_LINKS)).isEqualTo(041777);
        assertThat(root.xattr("/bin/ping", "security.capability")).hasValue(capNetRawV2);
        assertThat(root.xattrNames("/tmp")).contains("user.note");
        assertThat(root.lstat("/run/pipe")).hasValueSatisfying(s -> assertThat(s.isFifo()).isTrue());
        assertThat(root.names("/")).contains("run", "tmp", "bin", "out-abs");
        assertThatThrownBy(() -> root.createDirectory("/tmp", 0755, USER))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("EEXIST"));
    }

    @Test
    void theKernelViewsArePlainDirectoriesOfATreeBeingBuilt() throws IOException {
        root.createDirectory("/dev", 0755, OWNER);
        root.createDirectory("/proc", 0555, OWNER);
        root.createFile("/dev/shm/.keep", bytes(""), 0644, OWNER);

        assertThat(root.lstat("/dev/shm/.keep")).isPresent();
        assertThat(root.lstat("/proc")).hasValueSatisfying(s -> assertThat(s.permissions()).isEqualTo(0555));
    }

    @Test
    void removingTakesTheEntryNeverWhatALinkLeadsTo() throws IOException {
        root.createFile("/a/b/c", bytes("x"), 0644, USER);
        root.removeEntry("/out-abs");
        root.removeEntry("/a");
        root.removeEntry("/nothing/here");

        assertThat(root.lstat("/out-abs")).isEmpty();
        assertThat(root.lstat("/a")).isEmpty();
        assertThat(root.lstat("/nothing/here")).isEmpty();
        assertThatThrownBy(() -> root.removeEntry("/")).isInstanceOf(LinuxException.class);
    }

    @Test
    void dotDotDanglingParentsAndFilesAsParentsAreRefused() throws IOException {
        root.createSymlink("/dangling", "/no/such/dir", OWNER);
        root.createFile("/file", bytes("x"), 0644, OWNER);

        assertThatThrownBy(() -> root.createFile("/a/../../x", bytes("x"), 0644, USER))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("EINVAL"));
        assertThatThrownBy(() -> root.createFile("/dangling/x", bytes("x"), 0644, USER))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("ENOENT"));
        assertThatThrownBy(() -> root.createFile("/file/x", bytes("x"), 0644, USER))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("ENOTDIR"));
        assertThat(root.lstat("/no")).isEmpty();
    }

    @Test
    void aFailingStreamLeavesNoPartialFile() {
        InputStream failing = new InputStream() {
            int calls;

            @Override
            public int read() {
                throw new UnsupportedOperationException();
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (++calls > 3) throw new IOException("truncated");
                return Math.min(len, 1000);
            }
        };

        assertThatThrownBy(() -> root.createFile("/partial", failing, 0644, USER)).isInstanceOf(IOException.class).hasMessage("truncated");
        assertThat(root.lstat("/partial")).isEmpty();
    }

    private PosixFileAttributes attributes(String relative) {
        try {
            return Files.readAttributes(layout.inRoot(relative), PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static InputStream bytes(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }
}
