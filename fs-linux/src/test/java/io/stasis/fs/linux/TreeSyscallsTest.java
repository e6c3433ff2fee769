package io.stasis.fs.linux;

import static io.stasis.fs.linux.Syscalls.AT_SYMLINK_NOFOLLOW;
import static io.stasis.fs.linux.Syscalls.O_CLOEXEC;
import static io.stasis.fs.linux.Syscalls.O_DIRECTORY;
import static io.stasis.fs.linux.Syscalls.O_PATH;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The FFM bindings the tree-building calls use (symlinkat, mknodat, fchmodat, utimensat, the l*xattr family); needs no root. */
class TreeSyscallsTest {
    @TempDir
    Path dir;
    int dirFd;

    @BeforeEach
    void openDir() {
        dirFd = Syscalls.open(dir.toString(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    }

    @AfterEach
    void closeDir() {
        Syscalls.close(dirFd);
    }

    @Test
    void symlinkatStoresTheTargetAsGivenAndUtimensatSetsTheLinksOwnTime() throws IOException {
        Files.writeString(dir.resolve("target"), "t");
        Files.setLastModifiedTime(dir.resolve("target"), FileTime.from(Instant.parse("2000-01-01T00:00:00Z")));

        Syscalls.symlinkat("/does/not/../matter", dirFd, "link");
        Syscalls.utimensat(dirFd, "link", null, Instant.parse("2010-05-06T07:08:09.123456789Z"), AT_SYMLINK_NOFOLLOW);

        assertThat(Files.readSymbolicLink(dir.resolve("link"))).hasToString("/does/not/../matter");
        assertThat(Files.getLastModifiedTime(dir.resolve("link"), LinkOption.NOFOLLOW_LINKS))
                .isEqualTo(FileTime.from(Instant.parse("2010-05-06T07:08:09.123456789Z")));
        assertThatThrownBy(() -> Syscalls.symlinkat("x", dirFd, "link"))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("EEXIST"));
    }

    @Test
    void mknodatMakesAFifoAndFchmodatSetsItsMode() throws IOException {
        Syscalls.mknodat(dirFd, "fifo", Syscalls.S_IFIFO | 0600, 0);
        Syscalls.fchmodat(dirFd, "fifo", 0640, 0);

        assertThat(Files.getAttribute(dir.resolve("fifo"), "unix:mode", LinkOption.NOFOLLOW_LINKS)).isEqualTo(010640);
    }

    @Test
    void userXattrsAreSetReadAndListedWithoutFollowingAndAbsentOnesAreEnodata() throws IOException {
        Files.writeString(dir.resolve("f"), "x");
        String path = "/proc/self/fd/" + dirFd + "/f";

        Syscalls.lsetxattr(path, "user.a", new byte[] {0, 1, 2, (byte) 0xff}, 0);
        Syscalls.lsetxattr(path, "user.empty", new byte[0], 0);

        assertThat(Syscalls.lgetxattr(path, "user.a")).containsExactly(0, 1, 2, 0xff);
        assertThat(Syscalls.lgetxattr(path, "user.empty")).isEmpty();
        assertThat(Syscalls.llistxattr(path)).contains("user.a", "user.empty");
        assertThatThrownBy(() -> Syscalls.lgetxattr(path, "user.none"))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Syscalls.ENODATA));
    }
}
