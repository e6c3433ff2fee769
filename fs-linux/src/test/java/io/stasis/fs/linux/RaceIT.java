package io.stasis.fs.linux;

import static io.stasis.fs.linux.SandboxLayout.CANARY;
import static io.stasis.fs.linux.SandboxLayout.INSIDE;
import static io.stasis.fs.linux.SandboxLayout.OUTSIDE_ONLY;
import static io.stasis.fs.linux.SandboxLayout.OWNER;
import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileContent;
import io.stasis.core.files.FileInfo;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A racer keeps swapping a directory and a symlink to the host (atomically, RENAME_EXCHANGE)
 * while other threads work through that path thousands of times: nothing outside the root may
 * ever be read, listed, pinned, created, changed or deleted.
 */
@Tag("root")
class RaceIT {
    private static final Logger log = LoggerFactory.getLogger(RaceIT.class);
    private static final int ITERATIONS_PER_WORKER = 4000;
    private static final int WORKERS = 2;

    @TempDir
    Path base;

    @ParameterizedTest(name = "absolute link: {0}")
    @ValueSource(booleans = {true, false})
    void swappingADirectoryAndASymlinkNeverLetsACallOut(boolean absolute) throws Exception {
        var layout = new SandboxLayout(base);
        layout.write("d/canary", INSIDE);
        layout.write("d/f", INSIDE);
        layout.write("d/m/x", INSIDE);
        String linkTarget = absolute ? layout.outside.toString() : "../outside";
        layout.symlink("dl", linkTarget);
        try (var outsideSocket = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
             var insideSocket = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
             var confined = ConfinedRoot.open(layout.root, OWNER)) {
            outsideSocket.bind(UnixDomainSocketAddress.of(layout.outside.resolve("sock")));
            insideSocket.bind(UnixDomainSocketAddress.of(layout.inRoot("d/sock")));
            Stat outsideSocketStat = Syscalls.statx(Syscalls.AT_FDCWD, layout.outside.resolve("sock").toString(), 0);
            Map<String, String> before = layout.snapshotOutside();

            var files = new LinuxSandboxFiles(OWNER);
            var leaks = new ConcurrentLinkedQueue<String>();
            var succeeded = new AtomicLong();
            var failed = new AtomicLong();
            var stop = new AtomicBoolean();
            var swaps = new AtomicLong();
            Thread racer = Thread.ofPlatform().name("racer").start(() -> {
                String d = layout.inRoot("d").toString();
                String dl = layout.inRoot("dl").toString();
                while (!stop.get()) {
                    try {
                        Syscalls.renameat2(Syscalls.AT_FDCWD, d, Syscalls.AT_FDCWD, dl, Syscalls.RENAME_EXCHANGE);
                        swaps.incrementAndGet();
                    } catch (LinuxException e) {
                        repair(layout, linkTarget);
                    }
                }
            });
            List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < WORKERS; w++) {
                int worker = w;
                workers.add(Thread.ofPlatform().name("worker-" + w).start(() -> {
                    for (int i = 0; i < ITERATIONS_PER_WORKER; i++) {
                        try {
                            oneOperation(i + worker, files, confined, layout, outsideSocketStat, leaks);
                            succeeded.incrementAndGet();
                        } catch (StasisException | LinuxException expected) {
                            failed.incrementAndGet(); // missing, not a directory, ...: the race is allowed to make calls fail
                        } catch (IOException e) {
                            leaks.add("unexpected " + e);
                        }
                    }
                }));
            }
            for (Thread worker : workers) worker.join();
            stop.set(true);
            racer.join();

            log.atInfo().addKeyValue("swaps", swaps.get()).addKeyValue("succeeded", succeeded.get())
                    .addKeyValue("failed", failed.get()).log("race finished");
            assertThat(leaks).isEmpty();
            assertThat(layout.snapshotOutside()).isEqualTo(before);
            assertThat(swaps.get()).as("the racer must actually have raced").isGreaterThan(100);
            assertThat(succeeded.get()).isGreaterThan(0);
        }
    }

    @ParameterizedTest(name = "absolute link: {0}")
    @ValueSource(booleans = {true, false})
    void deletingATreeWhileItsDirectoriesAreSwappedForSymlinksStaysInside(boolean absolute) throws Exception {
        var layout = new SandboxLayout(base);
        String linkTarget = absolute ? layout.outside.toString() : "../../outside";
        Map<String, String> before = layout.snapshotOutside();
        long swapsTotal = 0;
        try (var confined = ConfinedRoot.open(layout.root, OWNER)) {
            for (int round = 0; round < 60; round++) {
                for (String dir : List.of("a", "b", "c", "m", "c/deeper", "m/deeper"))
                    for (int f = 0; f < 15; f++) layout.write("t/" + dir + "/f" + f, INSIDE);
                if (!Files.exists(layout.inRoot("t/link"), LinkOption.NOFOLLOW_LINKS)) layout.symlink("t/link", linkTarget);
                var stop = new AtomicBoolean();
                var swaps = new AtomicLong();
                Thread racer = Thread.ofPlatform().name("racer").start(() -> {
                    String link = layout.inRoot("t/link").toString();
                    List<String> dirs = List.of("t/a", "t/b", "t/c", "t/m", "t/c/deeper", "t/m/deeper");
                    for (int i = 0; !stop.get(); i++) {
                        try {
                            Syscalls.renameat2(Syscalls.AT_FDCWD, layout.inRoot(dirs.get(i % dirs.size())).toString(),
                                    Syscalls.AT_FDCWD, link, Syscalls.RENAME_EXCHANGE);
                            swaps.incrementAndGet();
                        } catch (LinuxException e) {
                            try { // the deleter removed the link: put another one in
                                Files.createSymbolicLink(Path.of(link), Path.of(linkTarget));
                            } catch (IOException ignored) {
                                // t itself is gone or the link is back already
                            }
                        }
                    }
                });
                try {
                    confined.delete("/t", true);
                } catch (LinuxException e) {
                    // ENOTEMPTY: the racer kept refilling it; allowed
                } finally {
                    stop.set(true);
                    racer.join();
                }
                swapsTotal += swaps.get();
                assertThat(layout.snapshotOutside()).as("round " + round).isEqualTo(before);
                ConfinedCalls.deleteIfPresent(confined, "/t"); // quiet now: must finish
                assertThat(Files.exists(layout.inRoot("t"), LinkOption.NOFOLLOW_LINKS)).isFalse();
            }
        }
        log.atInfo().addKeyValue("swaps", swapsTotal).log("delete race finished");
        assertThat(layout.snapshotOutside()).isEqualTo(before);
    }

    /** One call through /d (a directory or, at any moment, a symlink to the host directory). */
    private static void oneOperation(int i, LinuxSandboxFiles files, ConfinedRoot confined, SandboxLayout layout,
                                     Stat outsideSocket, ConcurrentLinkedQueue<String> leaks) throws IOException {
        Path root = layout.root;
        switch (i % 11) {
            case 0 -> files.write(root, path("/d/w"), bytes("RACE-WRITE"), OptionalInt.empty(), 100);
            case 1 -> {
                try (FileContent c = files.read(root, path("/d/canary"))) {
                    String got = new String(c.stream().readAllBytes(), StandardCharsets.UTF_8);
                    if (got.contains(CANARY)) leaks.add("read returned the outside canary");
                }
            }
            case 2 -> {
                var names = files.list(root, path("/d")).stream().map(FileInfo::name).toList();
                if (names.contains(OUTSIDE_ONLY)) leaks.add("list showed the outside directory: " + names);
            }
            case 3 -> files.stat(root, path("/d/" + OUTSIDE_ONLY)); // must never succeed
            case 4 -> files.mkdir(root, path("/d/m/n"), OptionalInt.empty());
            case 5 -> files.move(root, path("/d/w"), path("/d/w2"), true);
            case 6 -> files.delete(root, path("/d/w2"), false);
            case 7 -> confined.delete("/d/m", true);
            case 8 -> {
                String got = new String(confined.readAt("/d/f", 0, 100), StandardCharsets.UTF_8);
                if (got.contains(CANARY)) leaks.add("readAt returned the outside canary");
            }
            case 9 -> {
                try (PinnedFile pinned = confined.pinSocket("/d/sock")) {
                    if (pinned.stat().sameInode(outsideSocket)) leaks.add("pinned the outside socket");
                }
            }
            default -> ConfinedCalls.write(confined, "/d/f2", "RACE-WRITE-FILE".getBytes(StandardCharsets.UTF_8), 0644);
        }
        if (i % 11 == 3) leaks.add("stat found " + OUTSIDE_ONLY);
    }

    /** The workers may have moved things around inside; make sure both names exist again. */
    private static void repair(SandboxLayout layout, String linkTarget) {
        try {
            if (!Files.exists(layout.inRoot("d"), LinkOption.NOFOLLOW_LINKS)) Files.createDirectories(layout.inRoot("d"));
            if (!Files.exists(layout.inRoot("dl"), LinkOption.NOFOLLOW_LINKS)) Files.createSymbolicLink(layout.inRoot("dl"), Path.of(linkTarget));
        } catch (IOException ignored) {
            // raced with a worker; the next swap attempt tells
        }
    }

    private static SandboxPath path(String p) {
        return new SandboxPath(p);
    }

    private static ByteArrayInputStream bytes(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
    }
}
