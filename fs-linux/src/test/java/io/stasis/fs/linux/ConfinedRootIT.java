package io.stasis.fs.linux;

import static io.stasis.fs.linux.SandboxLayout.OWNER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("root")
class ConfinedRootIT {
    @TempDir
    Path base;
    SandboxLayout layout;
    ConfinedRoot root;

    @BeforeEach
    void open() {
        layout = new SandboxLayout(base);
        root = ConfinedRoot.open(layout.root, OWNER);
    }

    @AfterEach
    void close() {
        root.close();
    }

    @Test
    void readAtReadsWindowsOfARegularFile() throws IOException {
        layout.write("root/out", "0123456789");

        assertThat(new String(root.readAt("/root/out", 0, 100), StandardCharsets.UTF_8)).isEqualTo("0123456789");
        assertThat(new String(root.readAt("root/out", 3, 4), StandardCharsets.UTF_8)).isEqualTo("3456");
        assertThat(new String(root.readAt("/root/out", 8, 100), StandardCharsets.UTF_8)).isEqualTo("89");
        assertThat(root.readAt("/root/out", 10, 100)).isEmpty();
        assertThat(root.readAt("/root/out", 1000, 100)).isEmpty();
        assertThat(root.readAt("/root/out", 0, 0)).isEmpty();
    }

    @Test
    void droppingTheStartOfAFileKeepsItsSizeAndLaterBytes() throws IOException {
        byte[] data = new byte[20_000];
        Arrays.fill(data, (byte) 'x');
        layout.write("root/out", "");
        Files.write(layout.root.resolve("root/out"), data);
        assertThat(root.dataStart("/root/out")).isZero();

        assertThat(root.dropBefore("/root/out", 10_000)).as("whole blocks only").isEqualTo(8192);
        assertThat(root.sizeOf("/root/out")).isEqualTo(20_000);
        assertThat(root.readAt("/root/out", 8192, 4)).isEqualTo("xxxx".getBytes(StandardCharsets.UTF_8));
        assertThat(root.readAt("/root/out", 0, 4)).as("a hole reads as zeros").containsOnly(0);
        assertThat(root.dropBefore("/root/out", 100)).as("nothing more to drop").isEqualTo(8192);
        assertThat(root.dropBefore("/root/out", 20_480)).as("all of it").isEqualTo(20_000);
        assertThatThrownBy(() -> root.dropBefore("/../etc/passwd", 4096)).isInstanceOf(LinuxException.class);
    }

    @Test
    void readAtFollowsSymlinksInsideTheRoot() throws IOException {
        layout.write("data/real", "abc");
        layout.symlink("abs", "/data/real");
        layout.symlink("data/rel", "real");

        assertThat(root.readAt("/abs", 0, 10)).isEqualTo("abc".getBytes(StandardCharsets.UTF_8));
        assertThat(root.readAt("/data/rel", 1, 10)).isEqualTo("bc".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void readAtRefusesWhatIsNotARegularFileWithoutOpeningIt() throws IOException {
        Files.createDirectories(layout.inRoot("dir"));
        HostCommands.mkfifo(layout.inRoot("fifo")); // opening it for reading would block forever

        assertErrno(() -> root.readAt("/missing", 0, 1), Errno.ENOENT);
        assertErrno(() -> root.readAt("/dir", 0, 1), Errno.EISDIR);
        assertErrno(() -> root.readAt("/fifo", 0, 1), Errno.EINVAL);
    }

    @Test
    void sizeOfIsMinusOneWhenMissing() throws IOException {
        layout.write("a/f", "12345");
        layout.symlink("link", "a/f");

        assertThat(root.sizeOf("/a/f")).isEqualTo(5);
        assertThat(root.sizeOf("/link")).isEqualTo(5);
        assertThat(root.sizeOf("/a/missing")).isEqualTo(-1);
        assertThat(root.sizeOf("/a/f/below-a-file")).isEqualTo(-1);
    }

    @Test
    void writeFileCreatesParentsAndEverythingIsOwnedByTheSandboxRoot() throws IOException {
        ConfinedCalls.write(root, "/.stasis/proc/7/exit", "0\n".getBytes(StandardCharsets.UTF_8), 0640);

        Path file = layout.inRoot(".stasis/proc/7/exit");
        assertThat(Files.readString(file)).isEqualTo("0\n");
        assertOwnedBySandbox(file);
        assertThat(permissions(file)).isEqualTo("rw-r-----");
        for (Path dir : new Path[] {layout.inRoot(".stasis"), layout.inRoot(".stasis/proc"), layout.inRoot(".stasis/proc/7")}) {
            assertOwnedBySandbox(dir);
            assertThat(permissions(dir)).isEqualTo("rwxr-xr-x");
        }
    }

    @Test
    void writeFileReplacesAtomicallyAndLeavesNoTemporaryFile() throws IOException {
        ConfinedCalls.write(root, "/etc/conf", "one".getBytes(StandardCharsets.UTF_8), 0644);
        long inodeBefore = (long) Files.getAttribute(layout.inRoot("etc/conf"), "unix:ino");
        ConfinedCalls.write(root, "/etc/conf", "two".getBytes(StandardCharsets.UTF_8), 0600);

        assertThat(Files.readString(layout.inRoot("etc/conf"))).isEqualTo("two");
        assertThat((long) Files.getAttribute(layout.inRoot("etc/conf"), "unix:ino")).isNotEqualTo(inodeBefore);
        assertThat(permissions(layout.inRoot("etc/conf"))).isEqualTo("rw-------");
        try (Stream<Path> names = Files.list(layout.inRoot("etc"))) {
            assertThat(names.map(p -> p.getFileName().toString())).containsExactly("conf");
        }
    }

    @Test
    void mkdirsCreatesOwnedDirectoriesWithTheExactMode() throws IOException {
        root.mkdirs("/a/b/c", 0700);
        root.mkdirs("/a/b/c", 0700); // existing: fine

        assertThat(permissions(layout.inRoot("a/b/c"))).isEqualTo("rwx------");
        assertThat(permissions(layout.inRoot("a/b"))).isEqualTo("rwxr-xr-x");
        assertOwnedBySandbox(layout.inRoot("a"));
        assertOwnedBySandbox(layout.inRoot("a/b/c"));
        layout.write("file", "x");
        assertErrno(() -> root.mkdirs("/file", 0755), Errno.ENOTDIR);
        assertErrno(() -> root.mkdirs("/file/sub", 0755), Errno.ENOTDIR);
    }

    @Test
    void deleteRemovesTreesAndLinksButNotLinkTargets() throws IOException {
        layout.write("tree/a/b/c/file", "x");
        layout.write("tree/a/other", "y");
        layout.symlink("tree/a/link-to-keep", "/keep");
        layout.write("keep/precious", "z");
        layout.symlink("dirlink", "/keep");
        layout.write("file", "f");

        root.delete("/tree", true);
        root.delete("/dirlink", true);
        assertErrno(() -> root.delete("/missing", true), Errno.ENOENT);
        assertErrno(() -> root.delete("/missing/below", true), Errno.ENOENT);
        assertErrno(() -> root.delete("/file/below", true), Errno.ENOTDIR);

        assertThat(layout.inRoot("tree")).doesNotExist();
        assertThat(Files.exists(layout.inRoot("dirlink"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.readString(layout.inRoot("keep/precious"))).isEqualTo("z");
        assertErrno(() -> root.delete("/", true), Errno.EBUSY);
        assertErrno(() -> root.delete("/keep/..", true), Errno.EBUSY);
        assertThat(layout.inRoot("keep/precious")).exists();
    }

    @Test
    void deleteRefusesTreesDeeperThanItsLimit() throws IOException {
        Path deep = layout.inRoot("deep");
        Files.createDirectories(deep);
        int fd = Syscalls.open(deep.toString(), Syscalls.O_PATH | Syscalls.O_DIRECTORY | Syscalls.O_CLOEXEC);
        try { // built fd-relative: the tree is deeper than any path could name
            for (int i = 0; i <= TreeDeletion.MAX_DELETE_DEPTH + 1; i++) {
                Syscalls.mkdirat(fd, "d", 0755);
                int next = Syscalls.openat2(fd, "d", Syscalls.O_PATH | Syscalls.O_DIRECTORY | Syscalls.O_CLOEXEC, 0, 0);
                Syscalls.close(fd);
                fd = next;
            }
        } finally {
            Syscalls.close(fd);
        }

        assertErrno(() -> root.delete("/deep", true), Errno.ELOOP);
        root.delete("/deep/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d/d", true); // now within the limit
        root.delete("/deep", true);
        assertThat(layout.inRoot("deep")).doesNotExist();
    }

    @Test
    void pinnedSocketIsReachableThroughProcAndStaysTheSameInode() throws IOException {
        Path socketPath = layout.inRoot("run/app.sock");
        Files.createDirectories(socketPath.getParent());
        try (var server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socketPath));
            try (PinnedFile pinned = root.pinSocket("/run/app.sock")) {
                assertThat(pinned.procPath().toString()).startsWith("/proc/self/fd/");
                assertThat(pinned.stat().isSocket()).isTrue();
                // the sandbox swaps the socket for a symlink: the pinned inode is still what we reach
                Files.move(socketPath, layout.inRoot("run/moved.sock"));
                Files.createSymbolicLink(socketPath, Path.of("/elsewhere"));

                assertRoundTrip(server, pinned.procPath());
            }
        }
    }

    @Test
    void pinSocketRefusesSymlinksFilesAndMissingPaths() throws IOException {
        Path socketPath = layout.inRoot("run/real.sock");
        Files.createDirectories(socketPath.getParent());
        try (var server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(socketPath));
            layout.symlink("run/link.sock", "/run/real.sock");
            layout.symlink("run/rel.sock", "real.sock");
            layout.write("run/file.sock", "not a socket");

            assertErrno(() -> root.pinSocket("/run/link.sock"), Errno.ENOTSOCK);
            assertErrno(() -> root.pinSocket("/run/rel.sock"), Errno.ENOTSOCK);
            assertErrno(() -> root.pinSocket("/run/file.sock"), Errno.ENOTSOCK);
            assertErrno(() -> root.pinSocket("/run"), Errno.ENOTSOCK);
            assertErrno(() -> root.pinSocket("/run/missing.sock"), Errno.ENOENT);
            try (PinnedFile pinned = root.pinSocket("/run/real.sock")) {
                assertRoundTrip(server, pinned.procPath());
            }
        }
    }

    @Test
    void closedRootRefusesFurtherUse() {
        root.close();
        root.close(); // idempotent

        assertThatThrownBy(() -> root.sizeOf("/x")).isInstanceOf(IllegalStateException.class);
    }

    static void assertRoundTrip(ServerSocketChannel server, Path through) throws IOException {
        try (var client = SocketChannel.open(UnixDomainSocketAddress.of(through)); var accepted = server.accept()) {
            client.write(ByteBuffer.wrap("ping".getBytes(StandardCharsets.UTF_8)));
            ByteBuffer got = ByteBuffer.allocate(4);
            while (got.hasRemaining()) if (accepted.read(got) < 0) break;
            assertThat(new String(got.array(), StandardCharsets.UTF_8)).isEqualTo("ping");
        }
    }

    static void assertErrno(Runnable call, int errno) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(LinuxException.class,
                e -> assertThat(e.errnoName()).isEqualTo(Errno.name(errno)));
    }

    static void assertOwnedBySandbox(Path p) throws IOException {
        assertThat((int) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(OWNER.uid());
        assertThat((int) Files.getAttribute(p, "unix:gid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(OWNER.gid());
    }

    static String permissions(Path p) throws IOException {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
    }
}
