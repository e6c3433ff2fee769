package io.stasis.fs.linux;

import static io.stasis.fs.linux.ConfinedRootIT.assertOwnedBySandbox;
import static io.stasis.fs.linux.ConfinedRootIT.permissions;
import static io.stasis.fs.linux.SandboxLayout.OWNER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileContent;
import io.stasis.core.files.FileInfo;
import io.stasis.core.files.FileType;
import io.stasis.core.files.SandboxPath;
import io.stasis.core.spi.FileOwner;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every operation of the files API and its error mapping, against a real directory tree. */
@Tag("root")
class LinuxSandboxFilesIT {
    private static final long NO_LIMIT = Long.MAX_VALUE;

    @TempDir
    Path base;
    SandboxLayout layout;
    final LinuxSandboxFiles files = new LinuxSandboxFiles(OWNER);

    @BeforeEach
    void layout() {
        layout = new SandboxLayout(base);
    }

    // --- read ---

    @Test
    void readStreamsAFileWithItsSize() throws IOException {
        byte[] big = new byte[20 * 1024 * 1024 + 3];
        new Random(1).nextBytes(big);
        Files.write(layout.inRoot("big.bin"), big);

        try (FileContent content = files.read(layout.root, path("big.bin"))) {
            assertThat(content.size()).isEqualTo(big.length);
            assertThat(Arrays.equals(content.stream().readAllBytes(), big)).isTrue();
        }
    }

    @Test
    void readFollowsSymlinksInsideTheRoot() throws IOException {
        layout.write("home/user/notes.txt", "hello");
        layout.symlink("abs-link", "/home/user/notes.txt");
        layout.symlink("home/rel-link", "user/../user/notes.txt");
        layout.symlink("dir-link", "home/user");

        assertThat(readString("/abs-link")).isEqualTo("hello");
        assertThat(readString("/home/rel-link")).isEqualTo("hello");
        assertThat(readString("/dir-link/notes.txt")).isEqualTo("hello");
        assertThat(readString("/home/user/../user/./notes.txt")).isEqualTo("hello");
    }

    @Test
    void readErrors() throws IOException {
        layout.write("file", "x");
        Files.createDirectories(layout.inRoot("dir"));
        layout.symlink("loop1", "/loop2");
        layout.symlink("loop2", "/loop1");
        HostCommands.mkfifo(layout.inRoot("fifo"));

        assertError(() -> files.read(layout.root, path("/missing")), ErrorCode.FILE_NOT_FOUND, "/missing");
        assertError(() -> files.read(layout.root, path("/dir")), ErrorCode.IS_A_DIRECTORY, "/dir");
        assertError(() -> files.read(layout.root, path("/")), ErrorCode.IS_A_DIRECTORY, "/");
        assertError(() -> files.read(layout.root, path("/file/below")), ErrorCode.NOT_A_DIRECTORY, "/file/below");
        assertError(() -> files.read(layout.root, path("/fifo")), ErrorCode.INVALID_REQUEST, "not a regular file: /fifo");
        assertError(() -> files.read(layout.root, path("/loop1")), ErrorCode.INVALID_REQUEST, "/loop1");
    }

    @Test
    void aMissingRootIsAnInternalErrorThatDoesNotNameTheHostPath() {
        assertError(() -> files.read(base.resolve("no-such-root"), path("/x")), ErrorCode.INTERNAL, "root filesystem");
    }

    // --- write ---

    @Test
    void writeCreatesAFileAndItsParentsOwnedByTheSandboxRoot() throws IOException {
        FileInfo info = write("/home/user/new.txt", "content", OptionalInt.empty());

        assertThat(info.path()).isEqualTo("/home/user/new.txt");
        assertThat(info.name()).isEqualTo("new.txt");
        assertThat(info.type()).isEqualTo(FileType.FILE);
        assertThat(info.size()).isEqualTo(7);
        assertThat(info.mode()).isEqualTo(0644);
        assertThat(info.symlinkTarget()).isEmpty();
        Path file = layout.inRoot("home/user/new.txt");
        assertThat(Files.readString(file)).isEqualTo("content");
        assertThat(info.mtime()).isEqualTo(Files.getLastModifiedTime(file).toInstant());
        assertOwnedBySandbox(file);
        assertOwnedBySandbox(layout.inRoot("home"));
        assertOwnedBySandbox(layout.inRoot("home/user"));
        assertThat(permissions(layout.inRoot("home/user"))).isEqualTo("rwxr-xr-x");
    }

    @Test
    void writeKeepsTheModeAndOwnerOfAnExistingFileUnlessAModeIsGiven() throws IOException {
        layout.write("script.sh", "old");
        Files.setPosixFilePermissions(layout.inRoot("script.sh"), PosixFilePermissions.fromString("rwxr-x---"));
        Files.setAttribute(layout.inRoot("script.sh"), "unix:uid", 101000);

        assertThat(write("/script.sh", "new", OptionalInt.empty()).mode()).isEqualTo(0750);
        assertThat((int) Files.getAttribute(layout.inRoot("script.sh"), "unix:uid")).isEqualTo(101000);
        assertThat(write("/script.sh", "newer", OptionalInt.of(0600)).mode()).isEqualTo(0600);
        assertThat(permissions(layout.inRoot("script.sh"))).isEqualTo("rw-------");
        assertThat(Files.readString(layout.inRoot("script.sh"))).isEqualTo("newer");
        assertThat(write("/fresh", "x", OptionalInt.of(04755)).mode()).isEqualTo(04755);
    }

    @Test
    void writeGoesThroughASymlinkAndKeepsTheLink() throws IOException {
        layout.write("etc/real.conf", "old");
        layout.symlink("etc/abs.conf", "/etc/real.conf");
        layout.symlink("etc/rel.conf", "real.conf");
        layout.symlink("etc/chain.conf", "rel.conf");
        layout.symlink("etc/dangling.conf", "../var/created/by-link.conf");

        write("/etc/abs.conf", "one", OptionalInt.empty());
        assertThat(Files.readString(layout.inRoot("etc/real.conf"))).isEqualTo("one");
        write("/etc/chain.conf", "two", OptionalInt.empty());
        assertThat(Files.readString(layout.inRoot("etc/real.conf"))).isEqualTo("two");
        write("/etc/dangling.conf", "three", OptionalInt.empty());
        assertThat(Files.readString(layout.inRoot("var/created/by-link.conf"))).isEqualTo("three");

        for (String link : List.of("abs.conf", "rel.conf", "chain.conf", "dangling.conf"))
            assertThat(Files.isSymbolicLink(layout.inRoot("etc/" + link))).as(link).isTrue();
    }

    @Test
    void aFailedUploadLeavesTheOldFileAndNoTemporaryFile() throws IOException {
        layout.write("data/file", "old content");
        InputStream breaksMidway = new InputStream() {
            int sent;

            @Override
            public int read() throws IOException {
                if (sent++ < 100_000) return 'x';
                throw new IOException("connection reset by peer");
            }
        };

        assertError(() -> files.write(layout.root, path("/data/file"), breaksMidway, OptionalInt.empty(), NO_LIMIT),
                ErrorCode.MALFORMED_REQUEST, "/data/file");
        assertThat(Files.readString(layout.inRoot("data/file"))).isEqualTo("old content");
        assertOnlyEntries("data", "file");
    }

    @Test
    void anUploadPastTheLimitIsPayloadTooLargeAndLeavesTheOldFile() throws IOException {
        layout.write("data/file", "old content");

        assertError(() -> files.write(layout.root, path("/data/file"), new ByteArrayInputStream(new byte[1001]), OptionalInt.empty(), 1000),
                ErrorCode.PAYLOAD_TOO_LARGE, "/data/file");
        assertThat(Files.readString(layout.inRoot("data/file"))).isEqualTo("old content");
        assertOnlyEntries("data", "file");
        assertThat(files.write(layout.root, path("/data/file"), new ByteArrayInputStream(new byte[1000]), OptionalInt.empty(), 1000).size())
                .isEqualTo(1000);
    }

    @Test
    void aStreamThatFailsUncheckedAlsoLeavesNoTrace() throws IOException {
        InputStream fails = new InputStream() {
            @Override
            public int read() {
                throw new IllegalStateException("boom");
            }
        };

        assertThatThrownBy(() -> files.write(layout.root, path("/data/new"), fails, OptionalInt.empty(), NO_LIMIT))
                .hasMessage("boom");
        assertOnlyEntries("data");
    }

    @Test
    void writeErrors() throws IOException {
        Files.createDirectories(layout.inRoot("dir"));
        layout.write("file", "x");
        layout.symlink("loop1", "loop2");
        layout.symlink("loop2", "loop1");
        try (var server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(layout.inRoot("sock")));

            assertError(() -> write("/dir", "x", OptionalInt.empty()), ErrorCode.IS_A_DIRECTORY, "/dir");
            assertError(() -> write("/", "x", OptionalInt.empty()), ErrorCode.IS_A_DIRECTORY, "/");
            assertError(() -> write("/dir/..", "x", OptionalInt.empty()), ErrorCode.IS_A_DIRECTORY, "/");
            assertError(() -> write("/file/sub", "x", OptionalInt.empty()), ErrorCode.NOT_A_DIRECTORY, "/file/sub");
            assertError(() -> write("/sock", "x", OptionalInt.empty()), ErrorCode.INVALID_REQUEST, "not a regular file");
            assertError(() -> write("/loop1", "x", OptionalInt.empty()), ErrorCode.INVALID_REQUEST, "/loop1");
            assertError(() -> write("/x", "x", OptionalInt.of(010000)), ErrorCode.INVALID_REQUEST, "mode");
        }
    }

    // --- list ---

    @Test
    void listIsSortedAndDescribesEachEntryItself() throws IOException {
        layout.write("d/b.txt", "bb");
        layout.write("d/a.txt", "a");
        Files.createDirectories(layout.inRoot("d/c-dir"));
        layout.symlink("d/link", "a.txt");
        Files.setPosixFilePermissions(layout.inRoot("d/a.txt"), PosixFilePermissions.fromString("rw-------"));
        Files.setLastModifiedTime(layout.inRoot("d/a.txt"), FileTime.from(Instant.parse("2026-01-02T03:04:05Z")));

        List<FileInfo> items = files.list(layout.root, path("/d"));

        assertThat(items).extracting(FileInfo::name).containsExactly("a.txt", "b.txt", "c-dir", "link");
        assertThat(items).extracting(FileInfo::path).containsExactly("/d/a.txt", "/d/b.txt", "/d/c-dir", "/d/link");
        assertThat(items).extracting(FileInfo::type).containsExactly(FileType.FILE, FileType.FILE, FileType.DIRECTORY, FileType.SYMLINK);
        assertThat(items.get(0).mode()).isEqualTo(0600);
        assertThat(items.get(0).mtime()).isEqualTo(Instant.parse("2026-01-02T03:04:05Z"));
        assertThat(items.get(1).size()).isEqualTo(2);
        assertThat(items.get(3).symlinkTarget()).contains("a.txt");
        assertThat(items.get(3).size()).isEqualTo("a.txt".length());
    }

    @Test
    void listFollowsASymlinkToADirectoryAndListsTheRoot() throws IOException {
        layout.write("real/x", "x");
        layout.symlink("alias", "/real");

        assertThat(files.list(layout.root, path("/alias"))).extracting(FileInfo::path).containsExactly("/alias/x");
        assertThat(files.list(layout.root, path("/"))).extracting(FileInfo::path).containsExactly("/alias", "/real");
        assertThat(files.list(layout.root, path("/real/.."))).extracting(FileInfo::name).containsExactly("alias", "real");
    }

    @Test
    void listErrors() throws IOException {
        layout.write("file", "x");

        assertError(() -> files.list(layout.root, path("/file")), ErrorCode.NOT_A_DIRECTORY, "/file");
        assertError(() -> files.list(layout.root, path("/missing")), ErrorCode.FILE_NOT_FOUND, "/missing");
    }

    // --- stat ---

    @Test
    void statDescribesTheEntryWithoutFollowingIt() throws IOException {
        layout.write("f", "12345");
        layout.symlink("l", "/f");
        Files.createDirectories(layout.inRoot("d"));

        FileInfo file = files.stat(layout.root, path("/f"));
        assertThat(file).extracting(FileInfo::path, FileInfo::name, FileInfo::type, FileInfo::size)
                .containsExactly("/f", "f", FileType.FILE, 5L);
        FileInfo link = files.stat(layout.root, path("l"));
        assertThat(link.type()).isEqualTo(FileType.SYMLINK);
        assertThat(link.symlinkTarget()).contains("/f");
        assertThat(files.stat(layout.root, path("/d")).type()).isEqualTo(FileType.DIRECTORY);
        FileInfo root = files.stat(layout.root, path("/"));
        assertThat(root).extracting(FileInfo::path, FileInfo::name, FileInfo::type).containsExactly("/", "/", FileType.DIRECTORY);
        assertThat(files.stat(layout.root, path("/d/..")).path()).isEqualTo("/");
        assertError(() -> files.stat(layout.root, path("/nope")), ErrorCode.FILE_NOT_FOUND, "/nope");
        assertError(() -> files.stat(layout.root, path("/f/x")), ErrorCode.NOT_A_DIRECTORY, "/f/x");
    }

    // --- mkdir ---

    @Test
    void mkdirCreatesParentsOwnedWithModes() throws IOException {
        FileInfo info = files.mkdir(layout.root, path("/a/b/c"), OptionalInt.of(0700));

        assertThat(info).extracting(FileInfo::path, FileInfo::name, FileInfo::type, FileInfo::mode)
                .containsExactly("/a/b/c", "c", FileType.DIRECTORY, 0700);
        assertThat(permissions(layout.inRoot("a/b/c"))).isEqualTo("rwx------");
        assertThat(permissions(layout.inRoot("a/b"))).isEqualTo("rwxr-xr-x");
        assertOwnedBySandbox(layout.inRoot("a"));
        assertOwnedBySandbox(layout.inRoot("a/b/c"));
        assertThat(files.mkdir(layout.root, path("/x"), OptionalInt.empty()).mode()).isEqualTo(0755);
    }

    @Test
    void mkdirOfAnExistingDirectoryIsFineAFileInTheWayIsFileExistsAndLinksAreFollowed() throws IOException {
        Files.createDirectories(layout.inRoot("exists"));
        layout.write("file", "x");
        layout.symlink("dangling", "/nowhere");
        layout.symlink("to-dir", "/exists");

        assertThat(files.mkdir(layout.root, path("/exists"), OptionalInt.empty()).type()).isEqualTo(FileType.DIRECTORY);
        assertThat(files.mkdir(layout.root, path("/to-dir"), OptionalInt.empty()).type()).isEqualTo(FileType.DIRECTORY);
        assertThat(files.mkdir(layout.root, path("/"), OptionalInt.empty()).path()).isEqualTo("/");
        assertError(() -> files.mkdir(layout.root, path("/file"), OptionalInt.empty()), ErrorCode.FILE_EXISTS, "/file");
        assertError(() -> files.mkdir(layout.root, path("/file/sub"), OptionalInt.empty()), ErrorCode.FILE_EXISTS, "/file/sub");
        // a dangling symlink is followed inside the root, as write does: its target is created
        assertThat(files.mkdir(layout.root, path("/dangling/sub"), OptionalInt.empty()).type()).isEqualTo(FileType.DIRECTORY);
        assertThat(layout.inRoot("nowhere/sub")).isDirectory();
        assertThat(Files.isSymbolicLink(layout.inRoot("dangling"))).isTrue();
        assertError(() -> files.mkdir(layout.root, path("/y"), OptionalInt.of(-1)), ErrorCode.INVALID_REQUEST, "mode");
    }

    // --- move ---

    @Test
    void moveRenamesAndRefusesToReplaceUnlessAsked() throws IOException {
        layout.write("a", "A");
        layout.write("b", "B");
        Files.createDirectories(layout.inRoot("dir"));

        FileInfo moved = files.move(layout.root, path("/a"), path("/dir/a2"), false);
        assertThat(moved).extracting(FileInfo::path, FileInfo::name, FileInfo::type).containsExactly("/dir/a2", "a2", FileType.FILE);
        assertThat(Files.readString(layout.inRoot("dir/a2"))).isEqualTo("A");
        assertThat(layout.inRoot("a")).doesNotExist();

        assertError(() -> files.move(layout.root, path("/b"), path("/dir/a2"), false), ErrorCode.FILE_EXISTS, "/dir/a2");
        assertThat(Files.readString(layout.inRoot("dir/a2"))).isEqualTo("A");
        files.move(layout.root, path("/b"), path("/dir/a2"), true);
        assertThat(Files.readString(layout.inRoot("dir/a2"))).isEqualTo("B");
    }

    @Test
    void moveOfASymlinkMovesTheLinkAndDirectoriesMoveWhole() throws IOException {
        layout.write("t/file", "x");
        layout.symlink("link", "/t/file");

        FileInfo link = files.move(layout.root, path("/link"), path("/link2"), false);
        assertThat(link.type()).isEqualTo(FileType.SYMLINK);
        assertThat(link.symlinkTarget()).contains("/t/file");
        assertThat(files.move(layout.root, path("/t"), path("/t2"), false).type()).isEqualTo(FileType.DIRECTORY);
        assertThat(Files.readString(layout.inRoot("t2/file"))).isEqualTo("x");
    }

    @Test
    void moveErrors() throws IOException {
        layout.write("f", "x");
        layout.write("full/inner", "x");
        Files.createDirectories(layout.inRoot("empty"));
        Files.createDirectories(layout.inRoot("d"));

        assertError(() -> files.move(layout.root, path("/missing"), path("/x"), false), ErrorCode.FILE_NOT_FOUND, "/missing");
        assertError(() -> files.move(layout.root, path("/f"), path("/no/such/dir/x"), false), ErrorCode.FILE_NOT_FOUND, "/no/such/dir/x");
        assertError(() -> files.move(layout.root, path("/"), path("/x"), false), ErrorCode.INVALID_REQUEST, "root");
        assertError(() -> files.move(layout.root, path("/d/.."), path("/x"), false), ErrorCode.INVALID_REQUEST, "..");
        assertError(() -> files.move(layout.root, path("/f"), path("/"), true), ErrorCode.INVALID_REQUEST, "root");
        assertError(() -> files.move(layout.root, path("/d"), path("/full"), true), ErrorCode.DIRECTORY_NOT_EMPTY, "/full");
        assertError(() -> files.move(layout.root, path("/f"), path("/empty"), true), ErrorCode.IS_A_DIRECTORY, "/empty");
        assertError(() -> files.move(layout.root, path("/d"), path("/f"), true), ErrorCode.NOT_A_DIRECTORY, "/f");
        assertError(() -> files.move(layout.root, path("/d"), path("/d/inside"), false), ErrorCode.INVALID_REQUEST, "/d");
        assertError(() -> files.move(layout.root, path("/f/x"), path("/y"), false), ErrorCode.NOT_A_DIRECTORY, "/f/x");
        files.move(layout.root, path("/d"), path("/empty"), true); // an empty directory may be replaced
        assertThat(layout.inRoot("d")).doesNotExist();
    }

    @Test
    void moveAcrossAMountIsAClearInvalidRequest() throws IOException {
        layout.write("f", "x");
        Path mnt = Files.createDirectories(layout.inRoot("mnt"));
        HostCommands.mountTmpfs(mnt);
        try {
            assertError(() -> files.move(layout.root, path("/f"), path("/mnt/f"), false), ErrorCode.INVALID_REQUEST, "across filesystems");
            assertThat(layout.inRoot("f")).exists();
        } finally {
            HostCommands.umount(mnt);
        }
    }

    // --- delete ---

    @Test
    void deleteRemovesFilesLinksAndDirectories() throws IOException {
        layout.write("f", "x");
        layout.write("target/keep", "k");
        layout.symlink("link", "/target");
        Files.createDirectories(layout.inRoot("empty"));
        layout.write("tree/a/b/c", "x");
        layout.symlink("tree/a/out", "/target");

        files.delete(layout.root, path("/f"), false);
        files.delete(layout.root, path("/link"), false);
        files.delete(layout.root, path("/empty"), false);
        assertError(() -> files.delete(layout.root, path("/tree"), false), ErrorCode.DIRECTORY_NOT_EMPTY, "/tree");
        files.delete(layout.root, path("/tree"), true);

        assertOnlyEntries("", "target");
        assertThat(Files.readString(layout.inRoot("target/keep"))).isEqualTo("k");
    }

    @Test
    void deleteErrors() throws IOException {
        Files.createDirectories(layout.inRoot("d"));
        layout.write("f", "x");

        assertError(() -> files.delete(layout.root, path("/"), true), ErrorCode.INVALID_REQUEST, "root");
        assertError(() -> files.delete(layout.root, path("/.."), true), ErrorCode.INVALID_REQUEST, "..");
        assertError(() -> files.delete(layout.root, path("/d/.."), true), ErrorCode.INVALID_REQUEST, "..");
        assertError(() -> files.delete(layout.root, path("/missing"), false), ErrorCode.FILE_NOT_FOUND, "/missing");
        assertError(() -> files.delete(layout.root, path("/missing"), true), ErrorCode.FILE_NOT_FOUND, "/missing");
        assertError(() -> files.delete(layout.root, path("/f/x"), true), ErrorCode.NOT_A_DIRECTORY, "/f/x");
        assertThat(layout.inRoot("d")).isDirectory();
    }

    @Test
    void ownerIsTheOneGiven() {
        assertThat(new LinuxSandboxFiles(new FileOwner(123, 456)).owner()).isEqualTo(new FileOwner(123, 456));
    }

    // ---

    private FileInfo write(String p, String content, OptionalInt mode) {
        return files.write(layout.root, path(p), new ByteArrayInputStream(content.getBytes(StandardCharsets.UTF_8)), mode, NO_LIMIT);
    }

    private String readString(String p) throws IOException {
        try (FileContent c = files.read(layout.root, path(p))) {
            return new String(c.stream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private void assertOnlyEntries(String dir, String... names) throws IOException {
        Path d = dir.isEmpty() ? layout.root : layout.inRoot(dir);
        if (!Files.exists(d, LinkOption.NOFOLLOW_LINKS)) {
            assertThat(names).isEmpty();
            return;
        }
        try (Stream<Path> s = Files.list(d)) {
            assertThat(s.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder(names);
        }
    }

    static SandboxPath path(String p) {
        return new SandboxPath(p);
    }

    /** The call fails with {@code code}, its message contains {@code expected}, and nothing names a host path. */
    void assertError(ThrowingCallable call, ErrorCode code, String expected) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).as(e.getMessage()).isEqualTo(code);
            assertThat(e.getMessage()).contains(expected).doesNotContain(base.toString());
            assertThat(e.details().toString()).doesNotContain(base.toString());
            assertThat(Optional.ofNullable(e.getCause()).map(Throwable::getMessage).orElse("")).doesNotContain(base.toString());
        });
    }
}
