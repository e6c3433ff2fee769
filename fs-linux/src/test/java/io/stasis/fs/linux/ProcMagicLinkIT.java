package io.stasis.fs.linux;

import static io.stasis.fs.linux.SandboxLayout.CANARY;
import static io.stasis.fs.linux.SandboxLayout.OWNER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.SandboxPath;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The worst case for {@code /proc} tricks: the host's procfs is visible inside the root (bind
 * mounted for the test), so {@code /proc/self/root}, {@code /proc/N/cwd} and friends are real
 * magic links to the host's filesystem. RESOLVE_NO_MAGICLINKS must refuse every one of them.
 */
@Tag("root")
class ProcMagicLinkIT {
    @TempDir
    Path base;
    SandboxLayout layout;
    Path procInRoot;
    boolean mounted;
    Map<String, String> outsideBefore;
    ServerSocketChannel outsideSocket;
    final LinuxSandboxFiles files = new LinuxSandboxFiles(OWNER);
    ConfinedRoot confined;

    @BeforeEach
    void mountProc() throws IOException {
        layout = new SandboxLayout(base);
        outsideSocket = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        outsideSocket.bind(UnixDomainSocketAddress.of(layout.outside.resolve("sock")));
        layout.symlink("via-self-root", "/proc/self/root");
        layout.symlink("via-rel", "proc/self/root" + layout.outside);
        procInRoot = Files.createDirectories(layout.inRoot("proc"));
        HostCommands.bindMount(Path.of("/proc"), procInRoot);
        mounted = true;
        outsideBefore = layout.snapshotOutside();
        confined = ConfinedRoot.open(layout.root, OWNER);
    }

    @AfterEach
    void unmount() throws IOException {
        try {
            if (confined != null) confined.close();
            outsideSocket.close();
        } finally {
            if (mounted) HostCommands.umount(procInRoot);
        }
        assertThat(layout.snapshotOutside()).isEqualTo(outsideBefore);
    }

    /** Paths through magic links; OUTSIDE stands for the outside directory's host path. */
    static List<String> magicDirs() {
        return List.of("/proc/self/root/OUTSIDE", "/proc/thread-self/root/OUTSIDE",
                "/proc/" + ProcessHandle.current().pid() + "/root/OUTSIDE", "/proc/self/cwd/CWD_TO_OUTSIDE",
                "/via-self-root/OUTSIDE", "/via-rel");
    }

    String at(String dir) {
        return dir.replace("/OUTSIDE", layout.outside.toString())
                .replace("CWD_TO_OUTSIDE", Path.of("").toAbsolutePath().relativize(layout.outside).toString());
    }

    @Test
    void theMagicLinksReallyLeadOutsideWhenResolvedNaively() throws IOException {
        assertThat(Files.readString(Path.of(layout.root + "/proc/self/root" + layout.outside + "/canary"))).isEqualTo(CANARY);
        for (String dir : magicDirs())
            assertThat(Files.readString(Path.of(layout.root + at(dir) + "/canary"))).as(dir).isEqualTo(CANARY);
    }

    @ParameterizedTest
    @MethodSource("magicDirs")
    void everyOperationThroughAMagicLinkIsRefused(String magicDir) {
        String dir = at(magicDir);
        refused(() -> files.read(layout.root, path(dir + "/canary")).close());
        refused(() -> files.list(layout.root, path(dir)));
        refused(() -> files.stat(layout.root, path(dir + "/canary")));
        refused(() -> files.write(layout.root, path(dir + "/new"), new ByteArrayInputStream(new byte[] {1}), OptionalInt.empty(), 10));
        refused(() -> files.mkdir(layout.root, path(dir + "/newdir"), OptionalInt.empty()));
        refused(() -> files.move(layout.root, path(dir + "/canary"), path("/stolen"), false));
        refused(() -> files.move(layout.root, path("/via-rel"), path(dir + "/moved"), false));
        refused(() -> files.delete(layout.root, path(dir + "/canary"), false));
        refused(() -> files.delete(layout.root, path(dir + "/m"), true));
        linuxRefused(() -> confined.readAt(dir + "/canary", 0, 100));
        linuxRefused(() -> ConfinedCalls.write(confined, dir + "/new", new byte[] {1}, 0644));
        linuxRefused(() -> confined.mkdirs(dir + "/newdir", 0755));
        linuxRefused(() -> confined.delete(dir + "/m", true));
        linuxRefused(() -> confined.pinSocket(dir + "/sock").close());
        linuxRefused(() -> confined.sizeOf(dir + "/canary"));
    }

    @Test
    void fdMagicLinksAreRefusedToo() {
        // fd 0..2 and the JVM's own fds are magic links to host files
        for (String p : List.of("/proc/self/fd/0", "/proc/self/fd/1", "/proc/self/exe", "/proc/self/cwd"))
            assertThatThrownBy(() -> files.read(layout.root, path(p)).close())
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST));
    }

    private static SandboxPath path(String p) {
        return new SandboxPath(p);
    }

    /** Refused (a magic link, or a path into /proc): never file_not_found, which would mean it was looked up outside. */
    private void refused(ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).as(e.getMessage()).isEqualTo(ErrorCode.INVALID_REQUEST);
            assertThat(e.getMessage()).doesNotContain(CANARY);
        });
    }

    /** Refused as a magic link (ELOOP), or, for a path under /proc as written, as a kernel view (EACCES) before any lookup. */
    private void linuxRefused(ThrowingCallable call) {
        assertThat(catchThrowable(call)).isInstanceOfSatisfying(LinuxException.class,
                e -> assertThat(e.errno()).as(e.getMessage()).isIn(Errno.ELOOP, Errno.EACCES));
    }
}
