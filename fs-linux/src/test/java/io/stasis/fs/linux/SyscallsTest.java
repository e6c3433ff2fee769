package io.stasis.fs.linux;

import static io.stasis.fs.linux.Syscalls.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The FFM bindings against the real kernel; needs no root. */
class SyscallsTest {
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
    void openat2InRootClampsDotDotAndAbsoluteSymlinks() throws IOException {
        Path root = Files.createDirectories(dir.resolve("root"));
        Files.writeString(dir.resolve("secret"), "secret");
        Files.createSymbolicLink(root.resolve("abs"), dir.resolve("secret"));
        Files.createSymbolicLink(root.resolve("rel"), Path.of("../secret"));
        int rootFd = Syscalls.open(root.toString(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        try {
            for (String attack : new String[] {"../secret", "/../../secret", "abs", "rel"}) {
                assertThatThrownBy(() -> Syscalls.openat2(rootFd, attack, O_RDONLY | O_CLOEXEC, 0, RESOLVE_IN_ROOT))
                        .isInstanceOfSatisfying(LinuxException.class, e -> {
                            assertThat(e.errno()).isEqualTo(Errno.ENOENT);
                            assertThat(e.syscall()).isEqualTo("openat2");
                            assertThat(e.path()).isEqualTo(attack);
                        });
            }
        } finally {
            Syscalls.close(rootFd);
        }
    }

    @Test
    void modeMustBeZeroWithoutOCreat() {
        assertThatThrownBy(() -> Syscalls.openat2(dirFd, ".", O_RDONLY | O_DIRECTORY, 0644, 0))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Errno.EINVAL));
    }

    @Test
    void createWriteReadSeekTruncateSync() throws IOException {
        int fd = Syscalls.openat2(dirFd, "f", O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0640, RESOLVE_BENEATH);
        try {
            byte[] data = "hello, world".getBytes(StandardCharsets.UTF_8);
            Syscalls.write(fd, data, 0, data.length);
            Syscalls.fsync(fd);
            byte[] buf = new byte[5];
            assertThat(Syscalls.pread(fd, buf, 0, 5, 7)).isEqualTo(5);
            assertThat(new String(buf, StandardCharsets.UTF_8)).isEqualTo("world");
            assertThat(Syscalls.lseek(fd, 0, SEEK_SET)).isZero();
            assertThat(Syscalls.read(fd, buf, 0, 5)).isEqualTo(5);
            assertThat(new String(buf, StandardCharsets.UTF_8)).isEqualTo("hello");
            Syscalls.ftruncate(fd, 3);
            Stat st = Syscalls.fstat(fd);
            assertThat(st.size()).isEqualTo(3);
            assertThat(st.isRegularFile()).isTrue();
            assertThat(st.links()).isEqualTo(1);
            assertThat(st.mtime()).isEqualTo(Files.getLastModifiedTime(dir.resolve("f")).toInstant());
            assertThat(st.uid()).isEqualTo((int) Files.getAttribute(dir.resolve("f"), "unix:uid"));
            assertThat(Syscalls.pread(fd, buf, 0, 5, 100)).isZero();
        } finally {
            Syscalls.close(fd);
        }
        assertThat(Files.readString(dir.resolve("f"))).isEqualTo("hel");
    }

    @Test
    void chmodAndChownToOneself() throws IOException {
        Files.writeString(dir.resolve("f"), "x");
        int fd = Syscalls.open(dir.resolve("f").toString(), O_RDONLY | O_CLOEXEC);
        try {
            Syscalls.fchmod(fd, 0604);
            int uid = (int) Files.getAttribute(dir.resolve("f"), "unix:uid");
            int gid = (int) Files.getAttribute(dir.resolve("f"), "unix:gid");
            Syscalls.fchown(fd, uid, gid);
            assertThat(Syscalls.fstat(fd).permissions()).isEqualTo(0604);
        } finally {
            Syscalls.close(fd);
        }
    }

    @Test
    void directoriesLinksAndRenames() throws IOException {
        Syscalls.mkdirat(dirFd, "d", 0700);
        assertThat(Syscalls.statx(dirFd, "d", AT_SYMLINK_NOFOLLOW).isDirectory()).isTrue();
        assertThatThrownBy(() -> Syscalls.mkdirat(dirFd, "d", 0700))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Errno.EEXIST));

        Files.writeString(dir.resolve("a"), "A");
        Files.writeString(dir.resolve("b"), "B");
        assertThatThrownBy(() -> Syscalls.renameat2(dirFd, "a", dirFd, "b", RENAME_NOREPLACE))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Errno.EEXIST));
        Syscalls.renameat2(dirFd, "a", dirFd, "b", RENAME_EXCHANGE);
        assertThat(Files.readString(dir.resolve("b"))).isEqualTo("A");
        Syscalls.renameat2(dirFd, "a", dirFd, "b", 0);
        assertThat(Files.readString(dir.resolve("b"))).isEqualTo("B");

        Syscalls.linkat(dirFd, "b", dirFd, "hard", 0);
        assertThat(Syscalls.statx(dirFd, "b", 0).links()).isEqualTo(2);

        Files.createSymbolicLink(dir.resolve("l"), Path.of("some/target"));
        Stat link = Syscalls.statx(dirFd, "l", AT_SYMLINK_NOFOLLOW);
        assertThat(link.isSymlink()).isTrue();
        assertThat(link.size()).isEqualTo("some/target".length());
        assertThat(Syscalls.readlinkat(dirFd, "l")).isEqualTo("some/target");

        Syscalls.unlinkat(dirFd, "l", 0);
        Syscalls.unlinkat(dirFd, "d", AT_REMOVEDIR);
        assertThatThrownBy(() -> Syscalls.unlinkat(dirFd, "d", AT_REMOVEDIR))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Errno.ENOENT));
        assertThat(Files.exists(dir.resolve("l"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void readDirectoryReturnsEveryEntryBeyondOneBuffer() throws IOException {
        Path big = Files.createDirectories(dir.resolve("big"));
        IntStream.range(0, 3000).forEach(i -> {
            try {
                Files.createFile(big.resolve("entry-with-a-longish-name-" + i));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        Files.createDirectory(big.resolve("sub"));
        int fd = Syscalls.open(big.toString(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        try {
            var entries = Syscalls.readDirectory(fd);
            assertThat(entries).hasSize(3001);
            assertThat(entries).extracting(Syscalls.DirEntry::name).doesNotContain(".", "..").contains("sub", "entry-with-a-longish-name-2999");
            assertThat(Syscalls.readDirectory(fd)).isEmpty();
            Syscalls.lseek(fd, 0, SEEK_SET);
            assertThat(Syscalls.readDirectory(fd)).hasSize(3001);
        } finally {
            Syscalls.close(fd);
        }
    }

    @Test
    void errnoIsCapturedPerCall() {
        assertThatThrownBy(() -> Syscalls.statx(dirFd, "missing", 0))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("ENOENT"));
        assertThatThrownBy(() -> Syscalls.close(-1))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errnoName()).isEqualTo("EBADF"));
    }
}
