package io.stasis.fs.linux;

import static io.stasis.fs.linux.SandboxLayout.CANARY;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileEvent;
import io.stasis.core.files.SandboxPath;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watcher against the real kernel, on a sandbox root made of temp directories: the changes
 * are made from the host, like a sandbox's writes would be seen. Tests that must show that
 * something does NOT arrive make a marker change afterwards and wait for it: events come in
 * order, so anything unwanted would have arrived before it.
 */
@Tag("root")
class InotifyFileWatcherIT {
    @TempDir
    Path base;
    SandboxLayout layout;
    Path root;
    InotifyFileWatcher watcher;
    final List<InotifyWatch> watches = new ArrayList<>();

    @BeforeEach
    void setUp() {
        layout = new SandboxLayout(base);
        root = layout.root;
        watcher = new InotifyFileWatcher();
    }

    @AfterEach
    void tearDown() {
        watcher.close();
        assertThat(watcher.openWatches()).isZero();
    }

    @Test
    void reportsCreateModifyMoveAndDeleteInOrderWithTypes() throws IOException {
        var events = watch("/", true);

        Files.writeString(root.resolve("a"), "1");
        events.await("create /a file");
        append(root.resolve("a"), "2");
        events.await("modify /a file");
        Files.move(root.resolve("a"), root.resolve("b"));
        events.await("move /b from /a file");
        Files.delete(root.resolve("b"));
        events.await("delete /b file");
        Files.createDirectory(root.resolve("d"));
        events.await("create /d dir");
        Files.createSymbolicLink(root.resolve("l"), Path.of("/etc/passwd"));
        events.await("create /l symlink");
        Files.delete(root.resolve("d"));

        assertThat(events.await("delete /d dir")).containsExactly(
                "create /a file", "modify /a file", "move /b from /a file", "delete /b file",
                "create /d dir", "create /l symlink", "delete /d dir");
        assertThat(events.threads()).as("one delivering thread").hasSize(1);
    }

    @Test
    void eventsOfManyEntriesArriveInTheOrderTheyHappened() throws IOException {
        var events = watch("/", true);
        var expected = new ArrayList<String>();
        for (int i = 0; i < 50; i++) {
            Files.createFile(root.resolve("f" + i));
            expected.add("create /f" + i + " file");
        }

        assertThat(events.awaitUntil("50 creations", all -> all.size() >= 50)).containsExactlyElementsOf(expected);
    }

    @Test
    void mkdirMinusPAndATouchRightAfterAreAllReportedParentsFirst() throws IOException {
        var events = watch("/", true);
        for (int round = 0; round < 20; round++) {
            String r = "/r" + round;
            Files.createDirectories(root.resolve("r" + round + "/b/c"));
            Files.createFile(root.resolve("r" + round + "/b/c/f"));

            assertThat(events.await("create " + r + "/b/c/f file")).as("round %d", round)
                    .containsSubsequence("create " + r + " dir", "create " + r + "/b dir", "create " + r + "/b/c dir",
                            "create " + r + "/b/c/f file");
        }
        // the new directories are watched too
        Files.writeString(root.resolve("r7/b/c/g"), "x");
        events.await("create /r7/b/c/g file");
        assertThat(events.events()).doesNotHaveDuplicates();
    }

    @Test
    void directoriesMadeAfterTheStartAreWatchedAtAnyDepth() throws IOException {
        var events = watch("/", true);
        Path deep = root;
        StringBuilder shown = new StringBuilder();
        for (int level = 0; level < 12; level++) {
            deep = deep.resolve("l" + level);
            shown.append("/l").append(level);
            Files.createDirectory(deep);
            events.await("create " + shown + " dir");
        }
        Files.writeString(deep.resolve("leaf"), "x");
        events.await("create " + shown + "/leaf file");
        append(deep.resolve("leaf"), "y");
        events.await("modify " + shown + "/leaf file");
    }

    @Test
    void aMovedDirectoryKeepsBeingWatchedUnderItsNewName() throws IOException {
        Files.createDirectories(root.resolve("w/d/sub"));
        Files.writeString(root.resolve("w/d/sub/f"), "x");
        var events = watch("/w", true);

        Files.move(root.resolve("w/d"), root.resolve("w/e"));
        events.await("move /w/e from /w/d dir");
        append(root.resolve("w/e/sub/f"), "y");

        assertThat(events.await("modify /w/e/sub/f file")).containsExactly("move /w/e from /w/d dir", "modify /w/e/sub/f file");
    }

    @Test
    void aDirectoryMovedOutIsADeletionAndThenSilentAndOneMovedInIsACreationWithItsContent() throws IOException {
        Files.createDirectories(root.resolve("w/out/sub"));
        Files.createDirectories(root.resolve("elsewhere/in/sub"));
        Files.writeString(root.resolve("elsewhere/in/sub/f"), "x");
        var events = watch("/w", true);

        Files.move(root.resolve("w/out"), root.resolve("elsewhere/out"));
        events.await("delete /w/out dir");
        Files.writeString(root.resolve("elsewhere/out/sub/ignored"), "x"); // no longer in the watched tree
        Files.move(root.resolve("elsewhere/in"), root.resolve("w/in"));
        events.await("create /w/in/sub/f file");
        Files.writeString(root.resolve("w/in/sub/g"), "x");

        assertThat(events.await("create /w/in/sub/g file")).containsExactly(
                "delete /w/out dir", "create /w/in dir", "create /w/in/sub dir", "create /w/in/sub/f file",
                "create /w/in/sub/g file");
    }

    @Test
    void aNonRecursiveWatchSeesOnlyTheDirectoryItself() throws IOException {
        Files.createDirectories(root.resolve("w/existing"));
        var events = watch("/w", false);

        Files.createDirectory(root.resolve("w/d"));
        Files.writeString(root.resolve("w/d/inner"), "x");
        Files.writeString(root.resolve("w/existing/inner"), "x");
        Files.writeString(root.resolve("w/marker"), "x");

        assertThat(events.await("create /w/marker file")).containsExactly("create /w/d dir", "create /w/marker file");
    }

    @Test
    void aSingleFileWatchSeesOnlyThatFileAcrossDeletionAndReplacement() throws IOException {
        Files.createDirectories(root.resolve("w"));
        Files.writeString(root.resolve("w/f"), "1");
        Files.writeString(root.resolve("w/sibling"), "1");
        var events = watch("/w/f", false);

        append(root.resolve("w/sibling"), "2");
        append(root.resolve("w/f"), "2");
        events.await("modify /w/f file");
        Files.delete(root.resolve("w/f"));
        events.await("delete /w/f file");
        Files.writeString(root.resolve("w/.f.tmp"), "3");
        Files.move(root.resolve("w/.f.tmp"), root.resolve("w/f")); // how editors save

        assertThat(events.await("create /w/f file")).containsExactly("modify /w/f file", "delete /w/f file", "create /w/f file");
        Files.move(root.resolve("w/f"), root.resolve("w/renamed"));
        events.await("delete /w/f file");
        assertThat(events.events()).allMatch(e -> e.contains(" /w/f "));
    }

    @Test
    void aBurstOfAppendsIsOneOrAFewModifications() throws IOException {
        Files.writeString(root.resolve("log"), "");
        useLongWindows();
        var events = watch("/", true);

        for (int i = 0; i < 100; i++) append(root.resolve("log"), "line " + i + "\n");
        events.await("modify /log file");
        Files.createFile(root.resolve("marker"));

        List<String> all = events.await("create /marker file");
        assertThat(all.stream().filter(e -> e.equals("modify /log file")).count()).isBetween(1L, 3L);
        assertThat(all).containsOnly("modify /log file", "create /marker file");
    }

    @Test
    void aFileCreatedWrittenAndDeletedInOneBurstIsNothing() throws IOException {
        useLongWindows();
        var events = watch("/", true);

        Path tmp = root.resolve("scratch");
        Files.writeString(tmp, "x");
        append(tmp, "y");
        Files.delete(tmp);
        Files.writeString(root.resolve("new"), "x");
        append(root.resolve("new"), "y");
        Files.createFile(root.resolve("marker"));

        assertThat(events.await("create /marker file")).containsExactly("create /new file", "create /marker file");
    }

    @Test
    void aSymlinkToTheHostsRootNeverLeadsToHostEvents() throws IOException {
        layout.plantTraps();
        layout.symlink("out", "/");
        Files.createDirectories(root.resolve("tmp"));
        var events = watch("/", true);
        assertThat(watches.getLast().watchedDirectories()).as("only the real directories: /, /d, /a, /a/b, /tmp").isEqualTo(5);

        Path hostTmpFile = Files.createTempFile(Path.of("/tmp"), "stasis-watch-escape", ".txt");
        try {
            Files.writeString(hostTmpFile, "host");
            append(hostTmpFile, "host");
            Files.writeString(layout.outside.resolve("canary"), CANARY + "changed");
            Files.writeString(layout.outside.resolve("m/new"), CANARY);
            Files.createDirectory(layout.outside.resolve("m/newdir"));
            Files.writeString(layout.outside.resolve("m/newdir/f"), CANARY);
        } finally {
            Files.delete(hostTmpFile);
        }
        Files.createFile(root.resolve("marker"));

        assertThat(events.await("create /marker file")).containsExactly("create /marker file");
    }

    @Test
    void watchingATrapPathWatchesTheLinkItselfNeverWhereItPoints() throws IOException {
        layout.plantTraps();
        layout.symlink("out", "/");
        for (String trap : List.of("/out", "/out-abs", "/out-rel", "/deep", "/etc-abs", "/d/up", "/a/b/chain")) {
            var events = watch(trap, true);
            Files.writeString(layout.outside.resolve("canary"), CANARY + trap);
            Files.writeString(layout.outside.resolve("m/deeper/y"), CANARY + trap);
            Path link = root.resolve(trap.substring(1));
            Path target = Files.readSymbolicLink(link);
            Files.delete(link);
            Files.createSymbolicLink(link, target);

            assertThat(events.await("create " + trap + " symlink")).as(trap)
                    .containsExactly("delete " + trap + " file", "create " + trap + " symlink");
        }
    }

    @Test
    void aWatchedDirectorySwappedForASymlinkToTheOutsideIsNotFollowed() throws IOException {
        Files.createDirectories(root.resolve("s/sub"));
        var events = watch("/", true);

        Files.move(root.resolve("s"), root.resolve("s-old"));
        Files.createSymbolicLink(root.resolve("s"), layout.outside);
        events.await("create /s symlink");
        Files.writeString(layout.outside.resolve("canary"), CANARY + "changed");
        Files.writeString(layout.outside.resolve("sub-new"), CANARY);
        Files.writeString(root.resolve("s-old/sub/f"), "x");

        assertThat(events.await("create /s-old/sub/f file"))
                .containsExactly("move /s-old from /s dir", "create /s symlink", "create /s-old/sub/f file");
    }

    @Test
    void aMountInsideTheRootIsNeverEntered() throws IOException {
        Path mountPoint = Files.createDirectories(root.resolve("mnt"));
        HostCommands.mountTmpfs(mountPoint);
        try {
            Files.createDirectories(mountPoint.resolve("inner"));
            var events = watch("/", true);
            assertThat(watches.getLast().watchedDirectories()).as("/ only: /mnt is another mount").isEqualTo(1);

            Files.writeString(mountPoint.resolve("inner/f"), "x");
            Files.writeString(mountPoint.resolve("g"), "x");
            Files.createFile(root.resolve("marker"));

            assertThat(events.await("create /marker file")).containsExactly("create /marker file");
        } finally {
            HostCommands.umount(mountPoint);
        }
    }

    @Test
    void theWatchEndsWhenItsDirectoryIsDeleted() throws IOException {
        Files.createDirectories(root.resolve("w/sub"));
        Files.writeString(root.resolve("w/sub/f"), "x");
        var events = watch("/w", true);
        InotifyWatch watch = watches.getLast();

        Files.delete(root.resolve("w/sub/f"));
        Files.delete(root.resolve("w/sub"));
        Files.delete(root.resolve("w"));

        events.awaitEnd();
        assertThat(watch.ended()).isTrue();
        assertThat(watch.endReason()).contains(InotifyWatch.EndReason.DELETED);
        assertThat(events.events()).endsWith("delete /w dir").contains("delete /w/sub/f file", "delete /w/sub dir");
        awaitNoOpenWatch();
    }

    @Test
    void theWatchEndsWhenItsDirectoryIsMoved() throws IOException {
        Files.createDirectories(root.resolve("w"));
        var events = watch("/w", true);

        Files.move(root.resolve("w"), root.resolve("v"));

        events.awaitEnd();
        assertThat(watches.getLast().endReason()).contains(InotifyWatch.EndReason.MOVED);
        assertThat(events.events()).containsExactly("delete /w dir");
    }

    @Test
    void theWatchEndsWhenTheSandboxRootGoesAwayWithoutAnyEvent() throws IOException {
        Files.createDirectories(root.resolve("w"));
        var events = watch("/w", true);

        // like deleting the sandbox's subvolume: nothing watched changes, the root path just stops leading to it
        Files.move(root, base.resolve("root-gone"));

        events.awaitEnd();
        assertThat(watches.getLast().endReason()).contains(InotifyWatch.EndReason.DELETED);
        assertThat(events.events()).isEmpty();
        awaitNoOpenWatch();
    }

    @Test
    void closeStopsTheEventsAndFreesTheInotifyInstance() throws IOException {
        long inotifyBefore = fdsLinkingTo("anon_inode:inotify");
        long eventfdsBefore = fdsLinkingTo("anon_inode:[eventfd]");
        long fdsBefore = fdsLinkingTo(null);
        var events = watch("/", true);
        InotifyWatch watch = watches.getLast();
        assertThat(fdsLinkingTo("anon_inode:inotify")).isEqualTo(inotifyBefore + 1);
        Files.createFile(root.resolve("before"));
        events.await("create /before file");

        watch.close();
        watch.close(); // idempotent

        assertThat(fdsLinkingTo("anon_inode:inotify")).isEqualTo(inotifyBefore);
        assertThat(fdsLinkingTo("anon_inode:[eventfd]")).isEqualTo(eventfdsBefore);
        assertThat(fdsLinkingTo(null)).isEqualTo(fdsBefore);
        assertThat(watch.ended()).as("closed, not ended on its own").isFalse();
        // a second watch sees the next change; the closed one must not
        var sentinel = watch("/", true);
        Files.createFile(root.resolve("after"));
        sentinel.await("create /after file");
        assertThat(events.events()).containsExactly("create /before file");
        assertThat(events.endSignalled()).isFalse();
    }

    @Test
    void aListenerMayCloseItsOwnWatch() throws IOException {
        var holder = new InotifyWatch[1];
        var events = new EventRecorder();
        holder[0] = watcher.watch(root, new SandboxPath("/"), true, batch -> {
            events.accept(batch);
            holder[0].close();
        });
        Files.createFile(root.resolve("one"));
        events.await("create /one file");

        awaitNoOpenWatch();
        Files.createFile(root.resolve("two"));
        var sentinel = watch("/", true);
        Files.createFile(root.resolve("three"));
        sentinel.await("create /three file");
        assertThat(events.events()).containsExactly("create /one file");
    }

    @Test
    void closingTheWatcherClosesEveryWatch() {
        long inotifyBefore = fdsLinkingTo("anon_inode:inotify");
        for (int i = 0; i < 5; i++) watch("/", i % 2 == 0);
        assertThat(watcher.openWatches()).isEqualTo(5);

        watcher.close();

        assertThat(watcher.openWatches()).isZero();
        assertThat(fdsLinkingTo("anon_inode:inotify")).isEqualTo(inotifyBefore);
        assertThatThrownBy(() -> watch("/", true)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aThousandDirectoriesBeforeAndAfterTheStartWork() throws IOException {
        for (int i = 0; i < 10; i++) for (int j = 0; j < 100; j++) Files.createDirectories(root.resolve("old/" + i + "/" + j));
        var events = watch("/", true);
        assertThat(watches.getLast().watchedDirectories()).isEqualTo(1 + 1 + 10 + 1000);

        Files.writeString(root.resolve("old/9/99/f"), "x");
        events.await("create /old/9/99/f file");
        for (int i = 0; i < 1000; i++) {
            Path dir = Files.createDirectories(root.resolve("new/" + (i / 100) + "/" + (i % 100)));
            Files.writeString(dir.resolve("f"), "x");
        }

        List<String> all = events.await("create /new/9/99/f file");
        assertThat(all.stream().filter(e -> e.startsWith("create /new/") && e.endsWith("/f file")).count()).isEqualTo(1000);
        assertThat(all).doesNotHaveDuplicates();
        assertThat(watches.getLast().watchedDirectories()).isEqualTo(1012 + 1 + 10 + 1000);
    }

    @Test
    void aTreeLargerThanTheLimitIsRefusedAndOneGrowingPastItEnds() throws IOException {
        watcher.close();
        watcher = new InotifyFileWatcher(new InotifyFileWatcher.Limits(20, Duration.ofMillis(50), Duration.ofMillis(250)));
        for (int i = 0; i < 25; i++) Files.createDirectories(root.resolve("big/" + i));
        for (int i = 0; i < 10; i++) Files.createDirectories(root.resolve("small/" + i));

        assertThatThrownBy(() -> watch("/big", true))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
                    assertThat(e.getMessage()).contains("more than 20 directories below /big");
                });
        var events = watch("/small", true);
        for (int i = 10; i < 25; i++) Files.createDirectories(root.resolve("small/" + i));

        events.awaitEnd();
        assertThat(watches.getLast().endReason()).contains(InotifyWatch.EndReason.TOO_MANY_DIRECTORIES);
        awaitNoOpenWatch();
    }

    @Test
    void aListenerTooSlowForTheKernelQueueEndsTheWatchAsOverflowed() throws Exception {
        var entered = new CountDownLatch(1);
        var release = new CountDownLatch(1);
        var events = new EventRecorder();
        Consumer<List<FileEvent>> slow = batch -> {
            entered.countDown();
            try {
                release.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            events.accept(batch);
        };
        Files.createDirectories(root.resolve("flood"));
        watches.add(watcher.watch(root, new SandboxPath("/flood"), true, slow));

        Files.createFile(root.resolve("flood/first"));
        assertThat(entered.await(EventRecorder.DEADLINE.toSeconds(), TimeUnit.SECONDS)).as("first batch delivered").isTrue();
        // the reader is now stuck in the listener: let the kernel queue (16384 by default) overflow
        // not Files.readString: on an integer sysctl it returns only the first byte (reads in two steps)
        int queueLimit = Integer.parseInt(Files.readAllLines(Path.of("/proc/sys/fs/inotify/max_queued_events")).getFirst().trim());
        for (int i = 0; i < queueLimit + 1000; i++) Files.createFile(root.resolve("flood/f" + i));
        release.countDown();

        events.awaitEnd();
        assertThat(watches.getLast().endReason()).contains(InotifyWatch.EndReason.OVERFLOWED);
    }

    @Test
    void missingPathsAndFilesInTheWayAreTheFilesApisErrors() throws IOException {
        Files.writeString(root.resolve("file"), "x");

        assertThatThrownBy(() -> watch("/missing", true))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FILE_NOT_FOUND));
        assertThatThrownBy(() -> watch("/missing/deeper", true))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FILE_NOT_FOUND));
        assertThatThrownBy(() -> watch("/file/x", true))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.NOT_A_DIRECTORY);
                    assertThat(e.getMessage()).doesNotContain(base.toString());
                });
        assertThat(watcher.openWatches()).isZero();
    }

    @Test
    void pathsAreShownAsTheCallerNamedThemNormalised() throws IOException {
        Files.createDirectories(root.resolve("a/b"));
        var events = watch("a/./b/../b/", true);

        Files.createFile(root.resolve("a/b/f"));

        events.await("create /a/b/f file");
    }

    // ---------------------------------------------------------------------------------------

    private EventRecorder watch(String path, boolean recursive) {
        var events = new EventRecorder();
        watches.add(watcher.watch(root, new SandboxPath(path), recursive, events));
        return events;
    }

    /** The reader threads finish on their own after a close: wait for it with a deadline. */
    private void awaitNoOpenWatch() {
        long end = System.nanoTime() + EventRecorder.DEADLINE.toNanos();
        for (long pause = 1; watcher.openWatches() != 0; pause = Math.min(pause * 2, 50)) {
            if (System.nanoTime() > end) throw new AssertionError("watches still open: " + watcher.openWatches());
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(pause));
        }
    }

    /** For tests of coalescing: windows long enough that a slow moment of the machine cannot split a burst. */
    private void useLongWindows() {
        watcher.close();
        watcher = new InotifyFileWatcher(new InotifyFileWatcher.Limits(8192, Duration.ofMillis(500), Duration.ofSeconds(3)));
    }

    private static void append(Path file, String text) throws IOException {
        Files.writeString(file, text, UTF_8, StandardOpenOption.APPEND);
    }

    /** How many fds of this process link to {@code target} (all of them when null). */
    private static long fdsLinkingTo(String target) {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                if (target == null) return true;
                try {
                    return Files.readSymbolicLink(fd).toString().equals(target);
                } catch (IOException e) {
                    return false; // closed since listed
                }
            }).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
