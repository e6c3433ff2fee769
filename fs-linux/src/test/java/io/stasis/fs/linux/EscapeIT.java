package io.stasis.fs.linux;

import static io.stasis.fs.linux.SandboxLayout.CANARY;
import static io.stasis.fs.linux.SandboxLayout.INSIDE;
import static io.stasis.fs.linux.SandboxLayout.OWNER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileInfo;
import io.stasis.core.files.FileType;
import io.stasis.core.files.SandboxPath;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every operation, through every way out we know of, must stay in the root. {@code base/outside}
 * holds canaries named like what the calls touch; after each test it must be exactly as before,
 * and no call may return its content or its names. Each attack directory is first checked to
 * really lead outside when resolved naively, so the suite cannot pass on a toothless layout.
 */
@Tag("root")
class EscapeIT {
    @TempDir
    Path base;
    SandboxLayout layout;
    Map<String, String> outsideBefore;
    ServerSocketChannel outsideSocket;
    final LinuxSandboxFiles files = new LinuxSandboxFiles(OWNER);
    ConfinedRoot confined;

    /** Directories (as the sandbox names them) that a naive host-side join would resolve to {@code base/outside}. */
    static List<String> attackDirs() {
        return List.of("/../outside", "../outside", "/a/../../outside", "/d/../../outside",
                "/out-abs", "/out-rel", "/a/b/chain", "/deep", "/l2", "/d/up/outside", "/DEEP_CLIMB");
    }

    /**
     * Paths into the root's /proc, /sys and /dev, which the sandbox never sees (its kernel
     * filesystems are mounted over them), as written and through symlinks and {@code ..}. The first
     * ones are also ways out if procfs were visible inside the root (see {@link ProcMagicLinkIT}).
     */
    static List<String> kernelViewDirs() {
        return List.of("/proc/self/root/OUTSIDE", "/proc/1/root/OUTSIDE", "/proc/thread-self/root/OUTSIDE", "/proc", "/sys/kernel",
                "/dev", "/dev/shm", "/a/../../proc", "/to-proc", "/to-proc/sub", "/to-root/sys", "/to-dev-rel", "/d/up/../dev");
    }

    @BeforeEach
    void layout() throws IOException {
        layout = new SandboxLayout(base);
        layout.plantTraps();
        outsideSocket = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        outsideSocket.bind(UnixDomainSocketAddress.of(layout.outside.resolve("sock")));
        outsideBefore = layout.snapshotOutside();
        confined = ConfinedRoot.open(layout.root, OWNER);
    }

    @AfterEach
    void nothingOutsideChanged() throws IOException {
        confined.close();
        outsideSocket.close();
        assertThat(layout.snapshotOutside()).isEqualTo(outsideBefore);
    }

    /** Sandbox path for an attack directory plus a name. */
    String at(String dir, String name) {
        String resolved = dir.replace("/DEEP_CLIMB", "/.." .repeat(30) + "/" + layout.outsideFromSlash())
                .replace("OUTSIDE", layout.outsideFromSlash());
        return resolved + "/" + name;
    }

    @ParameterizedTest
    @MethodSource("attackDirs")
    void theLayoutReallyLeadsOutsideWhenResolvedNaively(String dir) throws IOException {
        Path naive = Path.of(layout.root + "/" + at(dir, "canary"));
        assertThat(Files.readString(naive)).isEqualTo(CANARY);
    }

    @ParameterizedTest
    @MethodSource("attackDirs")
    void readAndReadAtStayInside(String dir) {
        assertCode(() -> files.read(layout.root, path(at(dir, "canary"))).close(), ErrorCode.FILE_NOT_FOUND);
        assertThat(catchThrowable(() -> confined.readAt(at(dir, "canary"), 0, 100)))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Errno.ENOENT));
        assertThat(confined.sizeOf(at(dir, "canary"))).isEqualTo(-1);
    }

    @ParameterizedTest
    @MethodSource("attackDirs")
    void listAndStatStayInside(String dir) {
        assertCode(() -> files.list(layout.root, path(at(dir, ""))), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.stat(layout.root, path(at(dir, "canary"))), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.stat(layout.root, path(at(dir, SandboxLayout.OUTSIDE_ONLY))), ErrorCode.FILE_NOT_FOUND);
    }

    @ParameterizedTest
    @MethodSource("attackDirs")
    void writesLandInsideTheRoot(String dir) throws IOException {
        FileInfo info = files.write(layout.root, path(at(dir, "w")), bytes("PWNED-1"), OptionalInt.empty(), 1000);
        ConfinedCalls.write(confined, at(dir, "new"), "PWNED-2".getBytes(StandardCharsets.UTF_8), 0644);

        assertThat(info.type()).isEqualTo(FileType.FILE);
        assertThat(filesInRootContaining("PWNED-1")).hasSize(1);
        assertThat(filesInRootContaining("PWNED-2")).hasSize(1);
    }

    @ParameterizedTest
    @MethodSource("attackDirs")
    void mkdirsLandInsideTheRoot(String dir) throws IOException {
        files.mkdir(layout.root, path(at(dir, "m/made-by-api")), OptionalInt.empty());
        confined.mkdirs(at(dir, "m/made-by-root"), 0755);

        assertThat(dirsInRootNamed("made-by-api")).hasSize(1);
        assertThat(dirsInRootNamed("made-by-root")).hasSize(1);
    }

    @ParameterizedTest
    @MethodSource("attackDirs")
    void movesNeitherTakeFromNorPutOutside(String dir) {
        assertCode(() -> files.move(layout.root, path(at(dir, "canary")), path("/stolen"), false), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.move(layout.root, path(at(dir, "w")), path("/stolen"), true), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.move(layout.root, path("/d/f"), path(at(dir, "moved")), true), ErrorCode.FILE_NOT_FOUND);
        assertThat(layout.inRoot("stolen")).doesNotExist();
        assertThat(layout.inRoot("d/f")).exists();
    }

    @ParameterizedTest
    @MethodSource("attackDirs")
    void deletesDoNotReachOutside(String dir) {
        assertCode(() -> files.delete(layout.root, path(at(dir, "canary")), false), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.delete(layout.root, path(at(dir, "m")), true), ErrorCode.FILE_NOT_FOUND);
        ConfinedCalls.deleteIfPresent(confined, at(dir, "m"));
        ConfinedCalls.deleteIfPresent(confined, at(dir, "w2"));
    }

    @ParameterizedTest
    @MethodSource("attackDirs")
    void socketsOutsideCannotBePinned(String dir) {
        assertThat(catchThrowable(() -> confined.pinSocket(at(dir, "sock")).close()))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Errno.ENOENT));
    }

    @ParameterizedTest
    @MethodSource("kernelViewDirs")
    void pathsIntoKernelViewsAreRefusedAndChangeNothing(String dir) throws IOException {
        for (String view : List.of("proc", "sys", "dev")) Files.createDirectories(layout.inRoot(view));
        Files.createDirectories(layout.inRoot("proc/sub"));
        Files.writeString(layout.inRoot("proc/hidden"), "HIDDEN");
        layout.symlink("to-proc", "/proc");
        layout.symlink("to-root", "/");
        layout.symlink("to-dev-rel", "dev");
        var before = snapshotRoot();
        confined.close();
        confined = ConfinedRoot.open(layout.root, OWNER);

        assertCode(() -> files.write(layout.root, path(at(dir, "w")), bytes("HIDDEN-WRITE"), OptionalInt.empty(), 100), ErrorCode.INVALID_REQUEST);
        assertCode(() -> files.mkdir(layout.root, path(at(dir, "m")), OptionalInt.empty()), ErrorCode.INVALID_REQUEST);
        assertCode(() -> files.list(layout.root, path(at(dir, ""))), ErrorCode.INVALID_REQUEST);
        assertCode(() -> files.read(layout.root, path(at(dir, "hidden"))).close(), ErrorCode.INVALID_REQUEST);
        assertCode(() -> files.move(layout.root, path("/d/f"), path(at(dir, "moved")), true), ErrorCode.INVALID_REQUEST);
        assertCode(() -> files.delete(layout.root, path(at(dir, "hidden")), true), ErrorCode.INVALID_REQUEST);
        assertThat(catchThrowable(() -> ConfinedCalls.write(confined, at(dir, "w"), new byte[] {1}, 0644)))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Errno.EACCES));
        assertThat(catchThrowable(() -> confined.mkdirs(at(dir, "m"), 0755))).isInstanceOf(LinuxException.class);
        assertThat(snapshotRoot()).isEqualTo(before);
    }

    @Test
    void theKernelViewsThemselvesCannotBeReplacedOrRemoved() throws IOException {
        for (String view : List.of("proc", "sys", "dev")) Files.createDirectories(layout.inRoot(view));
        layout.symlink("to-root", "/");
        confined.close();
        confined = ConfinedRoot.open(layout.root, OWNER);
        for (String view : List.of("/proc", "/sys", "/dev", "/to-root/proc", "/d/up/../dev")) {
            assertCode(() -> files.delete(layout.root, path(view), true), ErrorCode.INVALID_REQUEST);
            assertCode(() -> files.move(layout.root, path(view), path("/moved"), false), ErrorCode.INVALID_REQUEST);
            assertCode(() -> files.write(layout.root, path(view), bytes("x"), OptionalInt.empty(), 10), ErrorCode.INVALID_REQUEST);
        }
        for (String view : List.of("proc", "sys", "dev")) assertThat(layout.inRoot(view)).isDirectory();
        assertThat(files.list(layout.root, path("/"))).extracting(FileInfo::name).contains("proc", "sys", "dev");
        assertCode(() -> files.stat(layout.root, path("/proc")), ErrorCode.INVALID_REQUEST);
    }

    @Test
    void deletingAnAttackSymlinkRecursivelyRemovesOnlyTheLink() {
        for (String link : List.of("/out-abs", "/out-rel", "/deep", "/l2", "/d/up")) {
            confined.delete(link, true);
            assertThat(Files.exists(layout.inRoot(link.substring(1)), LinkOption.NOFOLLOW_LINKS)).as(link).isFalse();
        }
        files.delete(layout.root, path("/a/b/chain"), true);
        assertThat(Files.exists(layout.inRoot("a/b/chain"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void finalSymlinksToOutsideAreFollowedOnlyInsideTheRoot() throws IOException {
        assertCode(() -> files.read(layout.root, path("/canary-abs")).close(), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.read(layout.root, path("/canary-rel")).close(), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.read(layout.root, path("/etc-abs/passwd")).close(), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.list(layout.root, path("/etc-abs")), ErrorCode.FILE_NOT_FOUND);
        assertThat(files.stat(layout.root, path("/canary-abs")).type()).isEqualTo(FileType.SYMLINK);

        files.write(layout.root, path("/canary-abs"), bytes("THROUGH-ABS"), OptionalInt.empty(), 1000);
        files.write(layout.root, path("/canary-rel"), bytes("THROUGH-REL"), OptionalInt.empty(), 1000);
        assertThat(Files.readString(layout.root.resolve(layout.outsideFromSlash()).resolve("canary"))).isEqualTo("THROUGH-ABS");
        assertThat(Files.readString(layout.inRoot("outside/canary"))).isEqualTo("THROUGH-REL");
        assertThat(Files.isSymbolicLink(layout.inRoot("canary-abs"))).isTrue();

        files.delete(layout.root, path("/canary-rel"), false);
        assertThat(Files.exists(layout.inRoot("canary-rel"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(catchThrowable(() -> confined.pinSocket("/sock-abs")))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Errno.ENOTSOCK));
    }

    @Test
    void symlinkLoopsAreRefused() {
        assertCode(() -> files.read(layout.root, path("/loop1")).close(), ErrorCode.INVALID_REQUEST);
        assertCode(() -> files.write(layout.root, path("/loop1"), bytes("x"), OptionalInt.empty(), 10), ErrorCode.INVALID_REQUEST);
        assertCode(() -> files.list(layout.root, path("/loop1")), ErrorCode.INVALID_REQUEST);
        assertCode(() -> files.mkdir(layout.root, path("/loop1/x"), OptionalInt.empty()), ErrorCode.INVALID_REQUEST);
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aDirectoryReplacedByASymlinkBetweenTwoCallsStillLeadsInside(boolean absolute) throws IOException {
        // first call: /d is a real directory
        assertThat(new String(confined.readAt("/d/canary", 0, 100), StandardCharsets.UTF_8)).isEqualTo(INSIDE);
        assertThat(files.list(layout.root, path("/d"))).extracting(FileInfo::name).contains("canary");
        try (var server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(UnixDomainSocketAddress.of(layout.inRoot("d/sock")));
            confined.pinSocket("/d/sock").close();
        }

        // the sandbox swaps it for a symlink to the host directory
        Files.move(layout.inRoot("d"), layout.inRoot("d-old"));
        layout.symlink("d", absolute ? layout.outside.toString() : "../outside");

        assertThat(catchThrowable(() -> confined.readAt("/d/canary", 0, 100))).isInstanceOf(LinuxException.class);
        assertThat(confined.sizeOf("/d/canary")).isEqualTo(-1);
        assertCode(() -> files.read(layout.root, path("/d/canary")).close(), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.list(layout.root, path("/d")), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.stat(layout.root, path("/d/canary")), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.delete(layout.root, path("/d/w2"), false), ErrorCode.FILE_NOT_FOUND);
        assertCode(() -> files.move(layout.root, path("/d/f"), path("/g"), false), ErrorCode.FILE_NOT_FOUND);
        assertThat(catchThrowable(() -> confined.pinSocket("/d/sock"))).isInstanceOf(LinuxException.class);
        ConfinedCalls.deleteIfPresent(confined, "/d/m");
        files.write(layout.root, path("/d/w"), bytes("SWAPPED"), OptionalInt.empty(), 100);
        confined.mkdirs("/d/m/made", 0755);
        assertThat(filesInRootContaining("SWAPPED")).hasSize(1);
        assertThat(dirsInRootNamed("made")).hasSize(1);
    }

    // ---

    private static ByteArrayInputStream bytes(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }

    private static SandboxPath path(String p) {
        return new SandboxPath(p);
    }

    private List<Path> filesInRootContaining(String content) throws IOException {
        try (Stream<Path> all = Files.walk(layout.root)) { // walk does not follow symlinks
            return all.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)).filter(p -> {
                try {
                    return Files.readString(p).equals(content);
                } catch (IOException e) {
                    return false;
                }
            }).toList();
        }
    }

    /** Every path in the root with its type (and a file's content), symlinks not followed. */
    private Map<String, String> snapshotRoot() throws IOException {
        try (Stream<Path> all = Files.walk(layout.root)) {
            var out = new TreeMap<String, String>();
            for (Path p : all.toList()) {
                String what = Files.isSymbolicLink(p) ? "link " + Files.readSymbolicLink(p)
                        : Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) ? "file " + Files.size(p) : "dir";
                out.put(layout.root.relativize(p).toString(), what);
            }
            return out;
        }
    }

    private List<Path> dirsInRootNamed(String name) throws IOException {
        try (Stream<Path> all = Files.walk(layout.root)) {
            return all.filter(p -> p.getFileName().toString().equals(name))
                    .filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).toList();
        }
    }

    /**
     * Fails with {@code code} and never carries the canary or the root's host path (attack paths
     * may spell the outside directory's host path themselves; that is the caller's own input).
     */
    private void assertCode(ThrowableAssert.ThrowingCallable call, ErrorCode code) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).as(e.getMessage()).isEqualTo(code);
            assertThat(e.getMessage()).doesNotContain(CANARY).doesNotContain(layout.root.toString());
        });
    }
}
