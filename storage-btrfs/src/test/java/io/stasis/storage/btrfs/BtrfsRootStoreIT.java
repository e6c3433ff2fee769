package io.stasis.storage.btrfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.host.MountInfo;
import io.stasis.host.Mounts;
import io.stasis.host.ToolRunner;
import io.stasis.testkit.TestRecipe;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("root")
class BtrfsRootStoreIT {
    private static final FileOwner OWNER = new FileOwner(100000, 100000);

    @TempDir
    Path dataDir;
    PoolFixture fixture;

    @BeforeEach
    void openPool() {
        fixture = PoolFixture.open(dataDir);
    }

    @AfterEach
    void closePool() {
        fixture.close(); // before @TempDir is deleted: never delete files under a live mount
    }

    @Test
    void twentyRootsComeAndGoAndTheUnmountedPoolLeavesNothing() throws Exception {
        var store = fixture.store;
        var image = store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        assertThat(image.name()).isEqualTo("tiny");
        assertThat(store.templates()).containsExactly(image);

        var ids = new ArrayList<SandboxId>();
        for (int i = 0; i < 20; i++) {
            var id = SandboxId.random();
            Path root = store.createRoot(id, "tiny", PoolFixture.DISK);
            assertThat(root.resolve("etc/version")).hasContent("1");
            ids.add(id);
        }
        assertThat(store.listRoots()).containsExactlyInAnyOrderElementsOf(ids);
        for (var id : ids) store.deleteRoot(id);
        assertThat(store.listRoots()).isEmpty();
        assertThat(fixture.pool.btrfs().listSubvolumes(fixture.pool.path())).containsExactly("templates/tiny");

        assertThat(store.deleteTemplate("tiny")).isTrue();
        assertThat(fixture.pool.btrfs().listSubvolumes(fixture.pool.path())).isEmpty();
        assertThat(store.templates()).isEmpty();

        assertThat(fixture.pool.unmountIfEmpty()).isTrue();
        assertThat(fixture.mounted()).isFalse();
        assertThat(MountInfo.read().below(dataDir.toRealPath())).isEmpty();
        assertThat(fixture.loopDevices()).isEmpty();
        assertThat(PoolFixture.losetupAll()).doesNotContain(fixture.image().toString());
    }

    /** What only btrfs does: read-only templates. Files, owners and errors of a root: RootStoreSuite. */
    @Test
    void aRootIsAWritableSnapshotOfAReadOnlyTemplate() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        Path template = fixture.pool.path().resolve("templates/tiny");
        assertThat(fixture.pool.btrfs().isReadOnly(template)).isTrue();
        assertThatThrownBy(() -> Files.writeString(template.resolve("etc/new"), "x"))
                .isInstanceOf(IOException.class).hasMessageContaining("Read-only file system");

        var id = SandboxId.random();
        Path root = store.createRoot(id, "tiny", PoolFixture.DISK);
        assertThat(fixture.pool.btrfs().isReadOnly(root)).isFalse();
        Files.writeString(root.resolve("etc/version"), "changed in the sandbox");
        Files.writeString(root.resolve("etc/new"), "new");
        assertThat(template.resolve("etc/version")).hasContent("1");
        assertThat(template.resolve("etc/new")).doesNotExist();
    }

    @Test
    void deleteRootCopesWithWhatASandboxLeavesBehind() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = store.createRoot(id, "tiny", PoolFixture.DISK);
        // Files of other users, read-only files and directories, and a nested subvolume (creating
        // one needs no privilege, so a sandbox can).
        Path locked = Files.createDirectories(root.resolve("home/u/locked"));
        Files.writeString(locked.resolve("f"), "x");
        Files.setAttribute(locked.resolve("f"), "unix:uid", 123456);
        Files.setPosixFilePermissions(locked, Set.of());
        fixture.pool.btrfs().create(root.resolve("home/u/nested"));
        fixture.pool.btrfs().create(root.resolve("home/u/nested/deeper"));
        fixture.pool.btrfs().snapshot(root.resolve("home/u/nested"), root.resolve("home/u/ro-snap"), true);

        store.deleteRoot(id);
        assertThat(root).doesNotExist();
        assertThat(fixture.pool.btrfs().listSubvolumes(fixture.pool.path())).containsExactly("templates/tiny");
    }

    @Test
    void aReadOnlySubvolumeIsDeletedThroughTheIoctlWithoutClearingTheFlag() {
        var ioctl = BtrfsIoctl.load().orElseThrow();
        Path a = fixture.pool.path().resolve("a");
        Path b = fixture.pool.path().resolve("b");
        ioctl.create(a);
        ioctl.snapshot(a, b, true);
        assertThat(fixture.pool.btrfs().isReadOnly(b)).isTrue();
        ioctl.delete(b);
        ioctl.delete(a);
        assertThat(fixture.pool.btrfs().listSubvolumes(fixture.pool.path())).isEmpty();
        assertThatThrownBy(() -> ioctl.delete(a)).isInstanceOfSatisfying(StasisException.class,
                e -> assertThat(e.details()).containsEntry("errno", 2));
    }

    @Test
    void replaceRootBranchesACheckpointAtTheSamePathAndPutsTheOldOneAside() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var source = SandboxId.random();
        Files.writeString(store.createRoot(source, "tiny", PoolFixture.DISK).resolve("etc/marker"), "from the checkpoint");
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(source, checkpoint);
        var id = SandboxId.random();
        Path root = store.createRoot(id, "tiny", PoolFixture.DISK);
        Files.writeString(root.resolve("etc/old"), "in the old root");
        // What holds the old root (a sandbox's mount, here an open directory) keeps it as it was.
        try (var held = Files.newDirectoryStream(root.resolve("etc"))) {
            assertThat(store.replaceRoot(id, checkpoint, PoolFixture.DISK)).isEqualTo(root);
            assertThat(root.resolve("etc/marker")).hasContent("from the checkpoint");
            assertThat(root.resolve("etc/old")).doesNotExist();
            assertThat(held.iterator()).toIterable().extracting(p -> p.getFileName().toString()).contains("old").doesNotContain("marker");
        }
        assertThat(store.listRoots()).containsExactlyInAnyOrder(source, id);
        assertThatThrownBy(() -> store.replaceRoot(id, checkpoint, PoolFixture.DISK)).as("an old root is already aside")
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED));
        assertThat(root.resolve("etc/marker")).as("a refused replace changes nothing").hasContent("from the checkpoint");
        store.deleteReplacedRoot(id);
        store.deleteReplacedRoot(id); // idempotent
        assertThat(fixture.pool.btrfs().listSubvolumes(fixture.pool.path())).filteredOn(p -> p.startsWith("roots/"))
                .containsExactlyInAnyOrder("roots/" + source.value(), "roots/" + id.value());

        var missing = CheckpointId.random();
        assertThatThrownBy(() -> store.replaceRoot(id, missing, PoolFixture.DISK)).isInstanceOf(StasisException.class);
        assertThat(root.resolve("etc/marker")).as("a failed replace puts the old root back").hasContent("from the checkpoint");

        // A crash between the replace and the deletion of the old root: deleting the sandbox's root takes both.
        store.replaceRoot(id, checkpoint, PoolFixture.DISK);
        store.deleteRoot(id);
        store.deleteRoot(source);
        store.deleteSnapshot(checkpoint);
        assertThat(store.listRoots()).isEmpty();
        assertThat(fixture.pool.btrfs().listSubvolumes(fixture.pool.path())).containsExactly("templates/tiny");
    }

    @Test
    void listRootsIgnoresJunk() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        store.createRoot(id, "tiny", PoolFixture.DISK);
        Path roots = fixture.pool.path().resolve("roots");
        Files.createDirectory(roots.resolve("junk"));
        Files.createDirectory(roots.resolve("sbx_TOOSHORT"));
        Files.writeString(roots.resolve("sbx_0123456789abcdef"), "a file, not a root");
        assertThat(store.listRoots()).containsExactly(id);
        Files.delete(roots.resolve("junk"));
        Files.delete(roots.resolve("sbx_TOOSHORT"));
        Files.delete(roots.resolve("sbx_0123456789abcdef"));
    }

    @Test
    void aPlainDirectoryRootIsDeletedWithoutFollowingItsLinks() throws Exception {
        var id = SandboxId.random();
        Path root = fixture.pool.path().resolve("roots").resolve(id.value());
        Files.createDirectories(root.resolve("etc"));
        Path hostFile = Files.writeString(dataDir.resolve("host-file"), "host");
        Files.createSymbolicLink(root.resolve("etc/passwd"), hostFile);
        Files.createSymbolicLink(root.resolve("data"), dataDir);
        assertThat(Subvolumes.isSubvolume(root)).isFalse();

        fixture.store.deleteRoot(id);
        assertThat(fixture.store.root(id)).isEmpty();
        assertThat(hostFile).hasContent("host");
    }

    @Test
    void aRecipeThatLeavesMountsBehindIsInstalledWithoutThem() throws Exception {
        var held = new AtomicReference<FileChannel>();
        var recipe = new TemplateRecipe() {
            @Override
            public String name() {
                return "mounty";
            }

            @Override
            public String version() {
                return "1";
            }

            @Override
            public String description() {
                return "leaves a proc and a busy tmpfs mounted in its tree, as a failed debootstrap can";
            }

            @Override
            public void populate(Path dir, Progress progress) throws Exception {
                TestRecipe.of(name(), version()).populate(dir, progress);
                var mounts = Mounts.fromSystem();
                mounts.mount("proc", "proc", Files.createDirectories(dir.resolve("proc")), List.of());
                Path tmp = Files.createDirectories(dir.resolve("tmp"));
                mounts.mount("tmpfs", "none", tmp, List.of());
                // An open file keeps a plain umount from working: it must be detached lazily.
                held.set(FileChannel.open(tmp.resolve("held"), StandardOpenOption.CREATE, StandardOpenOption.WRITE));
            }
        };
        try {
            var image = fixture.store.installTemplate(recipe, OWNER, TemplateRecipe.Progress.NONE);
            assertThat(image.name()).isEqualTo("mounty");
            assertThat(MountInfo.read().below(fixture.pool.path())).isEmpty();
            Path template = fixture.pool.path().resolve("templates/mounty");
            assertThat(template.resolve("etc/version")).hasContent("1");
            assertThat(template.resolve("proc")).isEmptyDirectory();
            assertThat(template.resolve("tmp")).isEmptyDirectory();
        } finally {
            if (held.get() != null) held.get().close();
        }
    }

    @Test
    void aSecondOpenReusesTheMountAndCloseNeverUnmountsRoots() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        store.createRoot(id, "tiny", PoolFixture.DISK);
        int mountId = MountInfo.read().at(fixture.mountPoint()).orElseThrow().id();

        assertThat(fixture.pool.unmountIfEmpty()).isFalse(); // a root exists: sandboxes run from it
        fixture.reopen();
        assertThat(MountInfo.read().at(fixture.mountPoint()).orElseThrow().id()).isEqualTo(mountId);
        assertThat(MountInfo.read().entries().stream().filter(e -> e.mountPoint().equals(fixture.mountPoint()))).hasSize(1);
        assertThat(fixture.loopDevices()).hasSize(1);
        assertThat(fixture.store.listRoots()).containsExactly(id);
        assertThat(fixture.store.template("tiny")).isPresent();

        // Someone else's btrfs mount: used in place, never unmounted by the pool.
        Path otherData = Files.createDirectory(dataDir.resolve("other"));
        Path existing = Files.createDirectories(fixture.pool.path().resolve("shared"));
        try (var other = BtrfsPool.open(BtrfsPoolConfig.existingMount(otherData, existing))) {
            assertThat(other.ownsMount()).isFalse();
            assertThat(other.path()).isEqualTo(existing);
            assertThat(other.unmountIfEmpty()).isFalse();
        }
        assertThat(fixture.mounted()).isTrue();
        assertThatThrownBy(() -> BtrfsPool.open(BtrfsPoolConfig.existingMount(otherData, dataDir)))
                .isInstanceOf(StasisException.class).hasMessageContaining("not btrfs");
        assertThatThrownBy(() -> BtrfsPool.open(BtrfsPoolConfig.image(dataDir)))
                .isInstanceOf(StasisException.class).hasMessageContaining("another process");
    }

    @Test
    void aFailedBuildLeavesNoPartialTemplateAndKeepsTheOldVersion() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var fromV1 = SandboxId.random();
        store.createRoot(fromV1, "tiny", PoolFixture.DISK);

        assertThatThrownBy(() -> store.installTemplate(TestRecipe.failing("tiny", "2"), OWNER, TemplateRecipe.Progress.NONE))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
                    assertThat(e.getMessage()).contains("broke on purpose");
                });
        assertThat(store.template("tiny").orElseThrow().version()).isEqualTo("1");
        assertThat(templateDirEntries()).containsExactlyInAnyOrder("tiny", "tiny.json");
        var another = SandboxId.random();
        assertThat(store.createRoot(another, "tiny", PoolFixture.DISK).resolve("etc/version")).hasContent("1");

        store.installTemplate(TestRecipe.of("tiny", "2"), OWNER, TemplateRecipe.Progress.NONE);
        assertThat(store.template("tiny").orElseThrow().version()).isEqualTo("2");
        assertThat(templateDirEntries()).containsExactlyInAnyOrder("tiny", "tiny.json");
        assertThat(fixture.pool.path().resolve("templates/tiny/etc/version")).hasContent("2");
        assertThat(store.root(fromV1).orElseThrow().resolve("etc/version")).hasContent("1"); // older roots keep their files
    }

    @Test
    void startupRemovesInterruptedBuildsAndRestoresAnInterruptedSwap() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        Path templates = fixture.pool.path().resolve("templates");
        var btrfs = fixture.pool.btrfs();
        btrfs.create(templates.resolve(".build-base-0123456789abcdef"));
        Files.writeString(templates.resolve(".build-base-0123456789abcdef/half"), "x");
        Files.writeString(templates.resolve(".build-tiny-aaaaaaaaaaaaaaaa.json"), "{}");
        // A crash between "old aside" and "new into place":
        Files.move(templates.resolve("tiny"), templates.resolve(".old-tiny-bbbbbbbbbbbbbbbb"), StandardCopyOption.ATOMIC_MOVE);

        fixture.reopen();
        assertThat(templateDirEntries()).containsExactlyInAnyOrder("tiny", "tiny.json");
        assertThat(fixture.store.template("tiny").orElseThrow().version()).isEqualTo("1");
    }

    @Test
    void aStaleLoopDeviceWithoutAutoclearIsDetachedBeforeMounting() throws Exception {
        assertThat(fixture.pool.unmountIfEmpty()).isTrue();
        // As if a crash hit between attach and mount: an explicit loop device, no autoclear.
        var attach = ToolRunner.run(List.of(ToolRunner.locate("losetup").toString(), "--find", "--show",
                fixture.image().toString()), Duration.ofSeconds(10));
        assertThat(attach.exitCode()).as(attach.stderrTail()).isZero();
        String stale = attach.stdoutText().strip();
        assertThat(fixture.loopDevices()).extracting(Path::toString).containsExactly(stale);

        fixture.reopen();
        assertThat(fixture.mounted()).isTrue();
        assertThat(fixture.loopDevices()).hasSize(1);
        String device = fixture.loopDevices().getFirst().getFileName().toString();
        assertThat(Files.readString(Path.of("/sys/block", device, "loop/autoclear")).strip()).isEqualTo("1");
        assertThat(fixture.pool.unmountIfEmpty()).isTrue();
        assertThat(fixture.loopDevices()).isEmpty();
    }

    @Test
    void rootsCanBeCreatedWhileTheTemplateIsReplaced() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "0"), OWNER, TemplateRecipe.Progress.NONE);
        var failures = new ConcurrentLinkedQueue<Throwable>();
        var created = new ConcurrentLinkedQueue<SandboxId>();
        var stop = new AtomicBoolean();
        var creators = new ArrayList<Thread>();
        for (int t = 0; t < 4; t++) {
            creators.add(Thread.ofPlatform().start(() -> {
                while (!stop.get()) {
                    var id = SandboxId.random();
                    try {
                        store.createRoot(id, "tiny", PoolFixture.DISK);
                        created.add(id);
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }
            }));
        }
        try {
            for (int version = 1; version <= 5; version++)
                store.installTemplate(TestRecipe.of("tiny", Integer.toString(version)), OWNER, TemplateRecipe.Progress.NONE);
        } finally {
            stop.set(true);
            for (var thread : creators) thread.join();
        }
        assertThat(failures).isEmpty();
        assertThat(created).isNotEmpty();
        assertThat(store.template("tiny").orElseThrow().version()).isEqualTo("5");
        assertThat(templateDirEntries()).containsExactlyInAnyOrder("tiny", "tiny.json");
        for (var id : created) store.deleteRoot(id);
    }

    @Test
    void snapshotTimingsIoctlVersusCli() {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        Path template = fixture.pool.path().resolve("templates/tiny");
        Path roots = fixture.pool.path().resolve("roots");
        var ioctl = BtrfsIoctl.load().orElseThrow();
        var cli = fixture.pool.btrfs();
        int rounds = 20;
        for (Subvolumes impl : List.<Subvolumes>of(cli, ioctl, cli, ioctl)) { // second pass: warm
            long[] snap = new long[rounds], snapRo = new long[rounds], delete = new long[2 * rounds];
            var made = new ArrayList<Path>();
            for (boolean readOnly : new boolean[] {false, true}) {
                for (int i = 0; i < rounds; i++) {
                    Path target = roots.resolve(SandboxId.random().value());
                    long t0 = System.nanoTime();
                    impl.snapshot(template, target, readOnly);
                    (readOnly ? snapRo : snap)[i] = System.nanoTime() - t0;
                    made.add(target);
                }
            }
            for (int i = 0; i < made.size(); i++) {
                long t0 = System.nanoTime();
                impl.delete(made.get(i));
                delete[i] = System.nanoTime() - t0;
            }
            System.out.printf("TIMING %-5s snapshot %s  read-only snapshot %s  delete %s%n",
                    impl.kind(), stats(snap), stats(snapRo), stats(delete));
        }
        var id = SandboxId.random();
        long t0 = System.nanoTime();
        store.createRoot(id, "tiny", PoolFixture.DISK);
        long t1 = System.nanoTime();
        store.deleteRoot(id);
        long t2 = System.nanoTime();
        System.out.printf("TIMING store createRoot %.2f ms, deleteRoot %.2f ms (%s)%n",
                (t1 - t0) / 1e6, (t2 - t1) / 1e6, store.subvolumeBackend());
        assertThat(store.listRoots()).isEmpty();
    }

    private static String stats(long[] nanos) {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return String.format("median %.2f ms (min %.2f, max %.2f)", sorted[sorted.length / 2] / 1e6, sorted[0] / 1e6,
                sorted[sorted.length - 1] / 1e6);
    }

    private List<String> templateDirEntries() throws IOException {
        try (Stream<Path> entries = Files.list(fixture.pool.path().resolve("templates"))) {
            return entries.map(p -> p.getFileName().toString()).toList();
        }
    }
}
