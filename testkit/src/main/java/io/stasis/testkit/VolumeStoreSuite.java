package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.VolumeStore;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeSnapshotId;
import io.stasis.core.volume.VolumeSyncId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link VolumeStore} must do: volumes, their snapshots and branches, sync snapshots,
 * send streams through files and volumes received from them, the scratch directory, and the
 * errors of each. A backend's test extends this and supplies fresh stores.
 *
 * <p>Not here, because a fake on plain directories cannot honestly do them: enforced size limits,
 * read-only snapshots, constant-time snapshots. The btrfs adapter's own tests cover those.
 */
public abstract class VolumeStoreSuite {
    /** A size limit for tests that do not test limits: room enough for anything they write. */
    protected static final long SIZE = 256L << 20;

    private VolumeStore store;

    /**
     * A new store holding nothing. Called once before each test, and again by tests that need a
     * second host (to receive streams); the runner removes every store it made after the test.
     */
    protected abstract VolumeStore newStore();

    /** Who a new volume's top directory belongs to; by default the user running the test, which needs no privilege. */
    protected FileOwner owner() {
        return TestFiles.currentUser();
    }

    protected VolumeStore store() {
        return store;
    }

    @BeforeEach
    void openStore() {
        store = newStore();
    }

    // --- volumes ---

    @Test
    void aNewVolumeIsAnEmptyWritableDirectoryOfItsOwner() throws Exception {
        var id = VolumeId.random();
        assertThat(store.path(id)).isEmpty();
        Path volume = store.create(id, SIZE, owner());

        assertThat(store.path(id)).contains(volume);
        assertThat(volume).isEmptyDirectory();
        assertThat(Files.getAttribute(volume, "unix:uid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(owner().uid());
        assertThat(Files.getAttribute(volume, "unix:gid", LinkOption.NOFOLLOW_LINKS)).isEqualTo(owner().gid());
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(volume))).isEqualTo("rwxr-xr-x");
        Files.writeString(volume.resolve("file"), "written");
        assertThat(store.path(id).orElseThrow().resolve("file")).hasContent("written");
        assertThat(store.list()).containsExactly(id);
    }

    @Test
    void aSecondVolumeWithTheSameIdIsRefusedAndTheFirstKept() throws Exception {
        var id = VolumeId.random();
        Files.writeString(store.create(id, SIZE, owner()).resolve("mine"), "kept");
        assertFails(() -> store.create(id, SIZE, owner()), ErrorCode.RUNTIME_FAILED);
        assertThat(store.path(id).orElseThrow().resolve("mine")).hasContent("kept");
    }

    @Test
    void volumesAreListedAndDeletedIdempotentlyAndTheirSnapshotsStay() throws Exception {
        assertThat(store.list()).isEmpty();
        var one = VolumeId.random();
        var two = VolumeId.random();
        Files.writeString(store.create(one, SIZE, owner()).resolve("state"), "saved");
        store.create(two, SIZE, owner());
        assertThat(store.list()).containsExactlyInAnyOrder(one, two);
        var snapshot = VolumeSnapshotId.random();
        store.snapshot(one, snapshot);
        var sync = VolumeSyncId.random();
        store.snapshotForSync(one, sync);

        Path path = store.path(one).orElseThrow();
        store.delete(one);
        store.delete(one);
        store.delete(VolumeId.random()); // never existed
        assertThat(path).doesNotExist();
        assertThat(store.path(one)).isEmpty();
        assertThat(store.list()).containsExactly(two);
        assertThat(store.snapshots()).containsExactly(snapshot);
        assertThat(store.syncSnapshots()).containsExactly(sync);
        assertThat(store.createFrom(VolumeId.random(), snapshot, SIZE).resolve("state")).hasContent("saved");
    }

    // --- snapshots and branches ---

    @Test
    void aSnapshotHoldsTheVolumeAsItWasAndBranchesAreIndependent() throws Exception {
        var id = VolumeId.random();
        Path volume = store.create(id, SIZE, owner());
        fill(volume);
        var snapshot = VolumeSnapshotId.random();
        store.snapshot(id, snapshot);
        assertThat(store.snapshots()).containsExactly(snapshot);
        var atSnapshot = TreeContents.of(volume);
        Files.writeString(volume.resolve("state"), "after");

        var branch = VolumeId.random();
        Path branchPath = store.createFrom(branch, snapshot, SIZE);
        assertThat(store.path(branch)).contains(branchPath);
        assertThat(TreeContents.of(branchPath)).isEqualTo(atSnapshot);
        Files.writeString(branchPath.resolve("state"), "branch");
        Files.writeString(branchPath.resolve("branch-only"), "x");
        assertThat(volume.resolve("state")).hasContent("after");
        assertThat(volume.resolve("branch-only")).doesNotExist();
        assertThat(store.createFrom(VolumeId.random(), snapshot, SIZE).resolve("state")).as("the snapshot saw neither").hasContent("before");

        store.deleteSnapshot(snapshot);
        store.deleteSnapshot(snapshot); // idempotent
        store.deleteSnapshot(VolumeSnapshotId.random()); // never existed
        assertThat(store.snapshots()).isEmpty();
        assertThat(branchPath.resolve("state")).as("branches outlive their snapshot").hasContent("branch");
        assertThat(store.list()).hasSize(3);
    }

    @Test
    void snapshotsAndBranchesOfWhatIsNotThereFailAndLeaveNothing() throws Exception {
        var missing = VolumeId.random();
        assertFails(() -> store.snapshot(missing, VolumeSnapshotId.random()), ErrorCode.RUNTIME_FAILED);
        assertFails(() -> store.snapshotForSync(missing, VolumeSyncId.random()), ErrorCode.RUNTIME_FAILED);
        assertFails(() -> store.createFrom(missing, VolumeSnapshotId.random(), SIZE), ErrorCode.RUNTIME_FAILED);
        assertThat(store.list()).isEmpty();
        assertThat(store.snapshots()).isEmpty();
        assertThat(store.syncSnapshots()).isEmpty();

        var id = VolumeId.random();
        Files.writeString(store.create(id, SIZE, owner()).resolve("mine"), "kept");
        var snapshot = VolumeSnapshotId.random();
        store.snapshot(id, snapshot);
        assertFails(() -> store.snapshot(id, snapshot), ErrorCode.RUNTIME_FAILED); // taken
        var sync = VolumeSyncId.random();
        store.snapshotForSync(id, sync);
        assertFails(() -> store.snapshotForSync(id, sync), ErrorCode.RUNTIME_FAILED); // taken
        assertFails(() -> store.createFrom(id, snapshot, SIZE), ErrorCode.RUNTIME_FAILED); // the volume exists
        assertThat(store.path(id).orElseThrow().resolve("mine")).hasContent("kept");
        assertThat(store.list()).containsExactly(id);
    }

    @Test
    void syncSnapshotsAreKeptListedAndDeletedIdempotently() throws Exception {
        var id = VolumeId.random();
        Path volume = store.create(id, SIZE, owner());
        var first = VolumeSyncId.random();
        assertThat(store.hasSyncSnapshot(first)).isFalse();
        store.snapshotForSync(id, first);
        Files.writeString(volume.resolve("later"), "x");
        var second = VolumeSyncId.random();
        store.snapshotForSync(id, second);
        assertThat(store.hasSyncSnapshot(first)).isTrue();
        assertThat(store.syncSnapshots()).containsExactlyInAnyOrder(first, second);
        assertThat(store.snapshots()).as("sync snapshots are not volume snapshots").isEmpty();

        store.deleteSyncSnapshot(first);
        store.deleteSyncSnapshot(first);
        store.deleteSyncSnapshot(VolumeSyncId.random());
        assertThat(store.hasSyncSnapshot(first)).isFalse();
        assertThat(store.syncSnapshots()).containsExactly(second);
        assertThat(volume.resolve("later")).exists();
    }

    // --- streams ---

    @Test
    void aFullStreamMakesAVolumeWithTheSameFiles() throws Exception {
        var id = VolumeId.random();
        Path volume = store.create(id, SIZE, owner());
        fill(volume);
        var sync = VolumeSyncId.random();
        store.snapshotForSync(id, sync);
        var expected = TreeContents.of(volume);
        Path stream = store.scratchDir().resolve(sync.value() + ".stream");

        store.send(sync, Optional.empty(), stream);
        assertThat(Files.size(stream)).isGreaterThan(1 << 20);
        assertThat(store.hasSyncSnapshot(sync)).as("sending leaves the snapshot").isTrue();
        var copy = VolumeId.random();
        Path received = store.receive(copy, List.of(stream), SIZE);
        assertThat(store.path(copy)).contains(received);
        assertThat(TreeContents.of(received)).isEqualTo(expected);
        Files.writeString(received.resolve("state"), "writable");
        assertThat(volume.resolve("state")).hasContent("before");
        assertThat(store.list()).containsExactlyInAnyOrder(id, copy);
        assertThat(store.syncSnapshots()).containsExactly(sync);
        store.deleteScratch(stream);
    }

    @Test
    void aChainOfStreamsMakesTheVolumeOnAnotherHost() throws Exception {
        var id = VolumeId.random();
        Path volume = store.create(id, SIZE, owner());
        fill(volume);
        var syncs = new ArrayList<VolumeSyncId>();
        var streams = new ArrayList<Path>();
        var states = new ArrayList<Map<String, String>>();
        Runnable sync = () -> {
            var next = VolumeSyncId.random();
            store.snapshotForSync(id, next);
            Path stream = store.scratchDir().resolve(next.value() + ".stream");
            store.send(next, syncs.isEmpty() ? Optional.empty() : Optional.of(syncs.getLast()), stream);
            syncs.add(next);
            streams.add(stream);
            states.add(TreeContents.of(volume));
        };
        sync.run();
        Files.writeString(volume.resolve("state"), "two");
        Files.delete(volume.resolve("dir/gone"));
        Files.createDirectories(volume.resolve("added/deeper"));
        Files.writeString(volume.resolve("added/deeper/file"), "new");
        sync.run();
        Files.writeString(volume.resolve("state"), "three");
        Files.delete(volume.resolve("link"));
        Files.writeString(volume.resolve("link"), "a file where a link was");
        Files.setPosixFilePermissions(volume.resolve("dir"), PosixFilePermissions.fromString("rwx------"));
        sync.run();
        assertThat(Files.size(streams.get(1))).as("only what changed").isLessThan(Files.size(streams.getFirst()) / 4);

        var there = newStore();
        for (int upTo = 1; upTo <= 3; upTo++) {
            var files = new ArrayList<Path>();
            for (Path stream : streams.subList(0, upTo)) // as a restore downloads them: into the receiver's scratch directory
                files.add(Files.copy(stream, there.scratchDir().resolve(upTo + "-" + stream.getFileName()), StandardCopyOption.REPLACE_EXISTING));
            var copy = VolumeId.random();
            Path received = there.receive(copy, files, SIZE);
            assertThat(TreeContents.of(received)).as("after " + upTo + " streams").isEqualTo(states.get(upTo - 1));
            files.forEach(there::deleteScratch);
        }
        assertThat(there.list()).hasSize(3);
        assertThat(there.syncSnapshots()).as("nothing received stays but the volumes").isEmpty();
        assertThat(there.snapshots()).isEmpty();
        assertThat(there.scratchDir()).isEmptyDirectory();
    }

    @Test
    void aParentWithoutItsSyncSnapshotGivesAFullStream() throws Exception {
        var id = VolumeId.random();
        Path volume = store.create(id, SIZE, owner());
        fill(volume);
        var first = VolumeSyncId.random();
        store.snapshotForSync(id, first);
        Files.writeString(volume.resolve("state"), "later");
        var second = VolumeSyncId.random();
        store.snapshotForSync(id, second);
        store.deleteSyncSnapshot(first);

        Path stream = store.scratchDir().resolve(second.value() + ".stream");
        store.send(second, Optional.of(first), stream);
        var there = newStore();
        Path received = there.receive(VolumeId.random(), List.of(stream), SIZE);
        assertThat(TreeContents.of(received)).isEqualTo(TreeContents.of(volume));
    }

    @Test
    void streamsThatCannotBeReceivedLeaveNoVolume() throws Exception {
        var id = VolumeId.random();
        fill(store.create(id, SIZE, owner()));
        var first = VolumeSyncId.random();
        store.snapshotForSync(id, first);
        Path full = store.scratchDir().resolve("full.stream");
        store.send(first, Optional.empty(), full);
        var second = VolumeSyncId.random();
        store.snapshotForSync(id, second);
        Path incremental = store.scratchDir().resolve("incremental.stream");
        store.send(second, Optional.of(first), incremental);
        byte[] bytes = Files.readAllBytes(full);
        Path cut = Files.write(store.scratchDir().resolve("cut.stream"), Arrays.copyOf(bytes, bytes.length / 2));

        var there = newStore();
        var target = VolumeId.random();
        assertFails(() -> there.receive(target, List.of(), SIZE), ErrorCode.RUNTIME_FAILED);
        assertFails(() -> there.receive(target, List.of(cut), SIZE), ErrorCode.RUNTIME_FAILED);
        assertFails(() -> there.receive(target, List.of(incremental), SIZE), ErrorCode.RUNTIME_FAILED); // its parent is not there
        assertFails(() -> there.receive(target, List.of(full, cut), SIZE), ErrorCode.RUNTIME_FAILED);
        assertThat(there.path(target)).isEmpty();
        assertThat(there.list()).isEmpty();
        assertThat(there.syncSnapshots()).isEmpty();

        Files.writeString(there.create(target, SIZE, owner()).resolve("mine"), "kept");
        assertFails(() -> there.receive(target, List.of(full), SIZE), ErrorCode.RUNTIME_FAILED); // the volume exists
        assertThat(there.path(target).orElseThrow().resolve("mine")).hasContent("kept");
        assertThat(there.list()).containsExactly(target);
    }

    @Test
    void sendingAMissingSyncSnapshotFails() {
        var missing = VolumeSyncId.random();
        assertFails(() -> store.send(missing, Optional.empty(), store.scratchDir().resolve("missing.stream")), ErrorCode.RUNTIME_FAILED);
    }

    @Test
    void theScratchDirectoryHoldsStreamFilesUntilTheyAreDeleted() throws Exception {
        Path scratch = store.scratchDir();
        assertThat(scratch).isDirectory();
        Path file = Files.writeString(scratch.resolve("some.stream"), "bytes");
        store.deleteScratch(file);
        assertThat(file).doesNotExist();
        store.deleteScratch(file); // gone already: nothing to say
        store.deleteScratch(scratch.resolve("never-there.stream"));
    }

    // --- many callers ---

    @Test
    void volumesComeAndGoInParallel() throws Exception {
        try (var threads = Executors.newVirtualThreadPerTaskExecutor()) {
            var results = new ArrayList<Future<?>>();
            for (int t = 0; t < 8; t++) {
                int worker = t;
                results.add(threads.submit(() -> {
                    for (int round = 0; round < 3; round++) {
                        var id = VolumeId.random();
                        Files.writeString(store.create(id, SIZE, owner()).resolve("who"), worker + "/" + round);
                        var snapshot = VolumeSnapshotId.random();
                        store.snapshot(id, snapshot);
                        var branch = VolumeId.random();
                        assertThat(store.createFrom(branch, snapshot, SIZE).resolve("who")).hasContent(worker + "/" + round);
                        store.deleteSnapshot(snapshot);
                        store.delete(branch);
                        store.delete(id);
                    }
                    return null;
                }));
            }
            for (var result : results) result.get();
        }
        assertThat(store.list()).isEmpty();
        assertThat(store.snapshots()).isEmpty();
    }

    // --- helpers ---

    /** Files of each kind: a 1 MiB file, a private one, a symlink, nested and empty directories. */
    private static void fill(Path volume) throws IOException {
        Files.writeString(volume.resolve("state"), "before");
        Files.write(volume.resolve("big"), TestFiles.randomBytes(1 << 20, 5));
        Files.createDirectories(volume.resolve("dir/empty"));
        Files.writeString(volume.resolve("dir/gone"), "deleted later");
        Files.writeString(volume.resolve("dir/private"), "secret");
        Files.setPosixFilePermissions(volume.resolve("dir/private"), PosixFilePermissions.fromString("rw-------"));
        Files.createSymbolicLink(volume.resolve("link"), Path.of("dir/private"));
    }

    private static void assertFails(ThrowingCallable call, ErrorCode code) {
        assertThatThrownBy(call).isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).as(e.getMessage()).isEqualTo(code));
    }
}
