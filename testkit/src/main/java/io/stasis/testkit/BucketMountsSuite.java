package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BucketMount;
import io.stasis.core.spi.BucketMountId;
import io.stasis.core.spi.BucketMounts;
import io.stasis.core.spi.BucketMounts.Flush;
import io.stasis.core.spi.MountedBucket;
import io.stasis.core.spi.OwnedBucketMount;
import io.stasis.core.spi.OwnedBucketMount.State;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link BucketMounts} must do: the bookkeeping of mounts (live, listed, refused twice,
 * gone after an unmount), files written through a mount reaching the bucket by the time an unmount
 * or a flush returns, prefixes, and who uses a mount. A backend's test extends this and supplies a
 * fresh instance and a fresh, empty bucket per test. Read-only enforcement, credentials, dead
 * daemons and pending uploads belong to a real FUSE client and stay in its own tests.
 */
public abstract class BucketMountsSuite {
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private BucketMounts mounts;

    /** A new instance with nothing mounted; {@link #spec} names a new, empty bucket it can mount. */
    protected abstract BucketMounts newMounts();

    /** A read-write mount of the whole bucket of this test, named {@code id}. */
    protected abstract BucketMount spec(BucketMountId id);

    /** Runs after each test once the suite has unmounted everything: the place to look for leaks on the host. */
    protected void afterEverythingUnmounted() {
    }

    protected BucketMounts mounts() {
        return mounts;
    }

    @BeforeEach
    void openMounts() {
        mounts = newMounts();
    }

    @AfterEach
    void unmountWhatIsLeft() {
        try {
            for (OwnedBucketMount left : mounts.listOwned()) mounts.unmount(left.id(), Flush.DISCARD);
            assertThat(mounts.listOwned()).as("mounts left after unmounting each").isEmpty();
        } finally {
            afterEverythingUnmounted();
        }
    }

    @Test
    void aMountIsLiveInADirectoryNamedByItsId() {
        var id = new BucketMountId("sbx_one-0");
        MountedBucket mounted = mounts.mount(spec(id));

        assertThat(mounted.id()).isEqualTo(id);
        assertThat(mounted.readOnly()).isFalse();
        assertThat(mounted.hostPath().getFileName()).hasToString(id.value());
        assertThat(mounted.hostPath()).isEmptyDirectory();
        assertThat(mounts.mounted(id)).contains(mounted);
        assertThat(mounts.listOwned()).containsExactly(new OwnedBucketMount(id, mounted.hostPath(), State.ACTIVE, 0));
    }

    @Test
    void aReadOnlyMountSaysSo() {
        var id = new BucketMountId("read-only");
        MountedBucket mounted = mounts.mount(spec(id).withReadOnly(true));

        assertThat(mounted.readOnly()).isTrue();
        assertThat(mounts.mounted(id)).hasValueSatisfying(m -> assertThat(m.readOnly()).isTrue());
    }

    @Test
    void whatIsWrittenThroughAMountIsInTheBucketOnceItIsUnmounted() throws IOException {
        MountedBucket writer = mounts.mount(spec(new BucketMountId("writer")));
        Files.createDirectories(writer.hostPath().resolve("run-1"));
        Files.writeString(writer.hostPath().resolve("run-1/result.json"), "{\"ok\":true}");

        mounts.unmount(writer.id(), Flush.WAIT);
        assertThat(writer.hostPath()).doesNotExist();

        MountedBucket reader = mounts.mount(spec(new BucketMountId("reader")));
        assertThat(names(reader.hostPath())).containsExactly("run-1");
        assertThat(Files.readString(reader.hostPath().resolve("run-1/result.json"))).isEqualTo("{\"ok\":true}");
    }

    @Test
    void aFlushSendsWhatWasWrittenAndKeepsTheMount() throws IOException {
        MountedBucket writer = mounts.mount(spec(new BucketMountId("writer")));
        Files.writeString(writer.hostPath().resolve("flushed.txt"), "flushed");

        mounts.flush(writer.id());

        assertThat(mounts.mounted(writer.id())).contains(writer);
        assertThat(mounts.listOwned()).extracting(OwnedBucketMount::pendingUploads).containsExactly(0);
        MountedBucket other = mounts.mount(spec(new BucketMountId("other")));
        assertThat(Files.readString(other.hostPath().resolve("flushed.txt"))).isEqualTo("flushed");
        assertThat(Files.readString(writer.hostPath().resolve("flushed.txt"))).isEqualTo("flushed");
    }

    @Test
    void aPrefixShowsOnlyTheKeysUnderIt() throws IOException {
        MountedBucket whole = mounts.mount(spec(new BucketMountId("whole")));
        Files.createDirectories(whole.hostPath().resolve("data/sub"));
        Files.writeString(whole.hostPath().resolve("data/a.txt"), "alpha");
        Files.writeString(whole.hostPath().resolve("data/sub/b.txt"), "beta");
        Files.createDirectories(whole.hostPath().resolve("other"));
        Files.writeString(whole.hostPath().resolve("other/c.txt"), "gamma");
        mounts.unmount(whole.id());

        MountedBucket data = mounts.mount(spec(new BucketMountId("data")).withPrefix("data"));
        assertThat(names(data.hostPath())).containsExactly("a.txt", "sub");
        assertThat(Files.readString(data.hostPath().resolve("sub/b.txt"))).isEqualTo("beta");
        // A prefix nothing is under yet is a place to write to.
        MountedBucket fresh = mounts.mount(spec(new BucketMountId("fresh")).withPrefix("not/there/yet"));
        assertThat(fresh.hostPath()).isEmptyDirectory();
    }

    @Test
    void unmountRemovesTheMountAndItsDirectoryAndIsIdempotent() {
        MountedBucket mounted = mounts.mount(spec(new BucketMountId("gone")));

        mounts.unmount(mounted.id());

        assertThat(mounts.mounted(mounted.id())).isEmpty();
        assertThat(mounts.listOwned()).isEmpty();
        assertThat(Files.exists(mounted.hostPath(), LinkOption.NOFOLLOW_LINKS)).as("%s left", mounted.hostPath()).isFalse();
        mounts.unmount(mounted.id());
        mounts.unmount(mounted.id(), Flush.DISCARD);
        mounts.unmount(new BucketMountId("never-mounted"));
    }

    @Test
    void mountingALiveIdAgainIsRefusedAndKeepsTheMount() {
        var spec = spec(new BucketMountId("twice"));
        MountedBucket first = mounts.mount(spec);

        assertThatThrownBy(() -> mounts.mount(spec)).isInstanceOfSatisfying(StasisException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_STATE));
        assertThat(mounts.mounted(spec.id())).contains(first);
    }

    @Test
    void anIdIsFreeAgainOnceUnmounted() {
        var spec = spec(new BucketMountId("again"));
        mounts.unmount(mounts.mount(spec).id());
        MountedBucket second = mounts.mount(spec);
        assertThat(mounts.mounted(spec.id())).contains(second);
    }

    @Test
    void eachMountIsListedByItsId() {
        var a = mounts.mount(spec(new BucketMountId("sbx_a-0")));
        var b = mounts.mount(spec(new BucketMountId("sbx_b-0")));
        assertThat(a.hostPath()).isNotEqualTo(b.hostPath());
        assertThat(mounts.listOwned()).extracting(OwnedBucketMount::id).containsExactlyInAnyOrder(a.id(), b.id());

        mounts.unmount(a.id());
        assertThat(mounts.listOwned()).extracting(OwnedBucketMount::id).containsExactly(b.id());
        assertThat(mounts.mounted(b.id())).contains(b);
    }

    @Test
    void anIdThatIsNotMountedHasNothingAndFlushesAsANoOp() {
        var id = new BucketMountId("nothing-here");
        assertThat(mounts.mounted(id)).isEmpty();
        assertThat(mounts.openFiles(id)).isEmpty();
        mounts.flush(id);
        assertThat(mounts.listOwned()).isEmpty();
    }

    @Test
    void aMissingBucketFailsTheMountAndLeavesNothing() {
        var spec = spec(new BucketMountId("no-bucket"));
        var missing = new BucketMount(spec.id(), spec.endpoint(), spec.region(), "no-such-bucket-here", "", false, spec.credentials(), List.of());

        assertThatThrownBy(() -> mounts.mount(missing)).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
            assertThat(e.getMessage()).contains("no-such-bucket-here", "no-bucket");
        });
        assertThat(mounts.mounted(missing.id())).isEmpty();
        assertThat(mounts.listOwned()).isEmpty();
    }

    /** A process of its own (the caller's are not counted): its working directory and a file it holds, both in the mount. */
    @Test
    void openFilesNamesTheProcessesUsingTheMount() throws Exception {
        MountedBucket mounted = mounts.mount(spec(new BucketMountId("busy")));
        Path held = Files.writeString(mounted.hostPath().resolve("held.txt"), "held open");
        assertThat(mounts.openFiles(mounted.id())).isEmpty();

        Process user = new ProcessBuilder("sleep", "60").directory(mounted.hostPath().toFile()).redirectInput(held.toFile()).start();
        try {
            String pid = "pid " + user.pid() + ": ";
            Await.until("the process listed as a user of the mount", DEADLINE, () -> mounts.openFiles(mounted.id()).stream()
                    .anyMatch(line -> line.startsWith(pid) && line.endsWith("held.txt")));
            assertThat(mounts.openFiles(mounted.id())).allMatch(line -> line.startsWith(pid), "every line names the process");
        } finally {
            user.destroyForcibly().waitFor();
        }
        Await.until("nothing open once the process ended", DEADLINE, () -> mounts.openFiles(mounted.id()).isEmpty());
    }

    protected static List<String> names(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
