package io.stasis.fs.linux;

import static io.stasis.fs.linux.Syscalls.IN_CREATE;
import static io.stasis.fs.linux.Syscalls.IN_DONT_FOLLOW;
import static io.stasis.fs.linux.Syscalls.IN_ISDIR;
import static io.stasis.fs.linux.Syscalls.IN_MOVED_FROM;
import static io.stasis.fs.linux.Syscalls.IN_MOVED_TO;
import static io.stasis.fs.linux.Syscalls.IN_ONLYDIR;
import static io.stasis.fs.linux.Syscalls.O_CLOEXEC;
import static io.stasis.fs.linux.Syscalls.O_DIRECTORY;
import static io.stasis.fs.linux.Syscalls.O_PATH;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The inotify, eventfd and poll bindings against the real kernel; needs no root. */
class InotifySyscallsTest {
    @TempDir
    Path dir;
    int inotifyFd;
    int dirFd;

    @BeforeEach
    void open() {
        inotifyFd = Syscalls.inotifyInit();
        dirFd = Syscalls.open(dir.toString(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    }

    @AfterEach
    void close() {
        Syscalls.close(dirFd);
        Syscalls.close(inotifyFd);
    }

    @Test
    void aWatchThroughTheFdLinkReportsNamedEventsAndPairsRenames() throws IOException {
        int wd = Syscalls.inotifyAddWatch(inotifyFd, "/proc/self/fd/" + dirFd, IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR);
        assertThat(Syscalls.readInotifyEvents(inotifyFd)).as("nothing queued yet").isEmpty();

        Files.createDirectory(dir.resolve("sub"));
        Files.writeString(dir.resolve("a-rather-long-name-that-needs-padding.txt"), "x");
        Files.move(dir.resolve("a-rather-long-name-that-needs-padding.txt"), dir.resolve("b"));

        List<Syscalls.InotifyEvent> events = drain();
        assertThat(events).extracting(Syscalls.InotifyEvent::name)
                .containsExactly("sub", "a-rather-long-name-that-needs-padding.txt", "a-rather-long-name-that-needs-padding.txt", "b");
        assertThat(events).allSatisfy(e -> assertThat(e.wd()).isEqualTo(wd));
        assertThat(events.get(0).has(IN_CREATE | IN_ISDIR)).isTrue();
        assertThat(events.get(0).mask() & IN_ISDIR).isNotZero();
        assertThat(events.get(2).has(IN_MOVED_FROM)).isTrue();
        assertThat(events.get(3).has(IN_MOVED_TO)).isTrue();
        assertThat(events.get(2).cookie()).isNotZero().isEqualTo(events.get(3).cookie());
    }

    @Test
    void dontFollowWouldWatchTheProcLinkItselfNotTheDirectory() {
        // why the watcher passes the /proc/self/fd link without IN_DONT_FOLLOW
        assertThatThrownBy(() -> Syscalls.inotifyAddWatch(inotifyFd, "/proc/self/fd/" + dirFd, IN_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Errno.ENOTDIR));
    }

    @Test
    void removingAWatchTwiceIsEinval() {
        int wd = Syscalls.inotifyAddWatch(inotifyFd, "/proc/self/fd/" + dirFd, IN_CREATE);
        Syscalls.inotifyRemoveWatch(inotifyFd, wd);

        assertThatThrownBy(() -> Syscalls.inotifyRemoveWatch(inotifyFd, wd))
                .isInstanceOfSatisfying(LinuxException.class, e -> assertThat(e.errno()).isEqualTo(Errno.EINVAL));
    }

    @Test
    void pollTimesOutThenSeesASignalledEventfd() {
        int wake = Syscalls.eventfd();
        try {
            assertThat(Syscalls.pollReadable(0, inotifyFd, wake)).isZero();
            Syscalls.signalEventfd(wake);
            Syscalls.signalEventfd(wake);
            assertThat(Syscalls.pollReadable(-1, inotifyFd, wake)).isEqualTo(0b10);
        } finally {
            Syscalls.close(wake);
        }
    }

    @Test
    void pollSeesQueuedInotifyEvents() throws IOException {
        Syscalls.inotifyAddWatch(inotifyFd, "/proc/self/fd/" + dirFd, IN_CREATE);
        Files.createFile(dir.resolve("f"));

        assertThat(Syscalls.pollReadable(5_000, inotifyFd)).isEqualTo(1);
    }

    private List<Syscalls.InotifyEvent> drain() {
        var all = new ArrayList<Syscalls.InotifyEvent>();
        for (List<Syscalls.InotifyEvent> some; !(some = Syscalls.readInotifyEvents(inotifyFd)).isEmpty(); ) all.addAll(some);
        return all;
    }
}
