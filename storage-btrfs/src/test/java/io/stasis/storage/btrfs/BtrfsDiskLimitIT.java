package io.stasis.storage.btrfs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.FileOwner;
import io.stasis.core.spi.TemplateRecipe;
import io.stasis.host.ToolRunner;
import io.stasis.testkit.TestRecipe;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Disk limits: simple quotas (squota) on the pool, a limit on every root, writes past it failing
 * with EDQUOT, deleting what the root wrote making room again, and what it shares with its
 * template or checkpoint not counting. Writes here come from the host (as root): btrfs quotas
 * apply to every writer, so this is what a sandbox sees too (the server's {@code SandboxApiIT}
 * checks it with dd inside a real sandbox and its fork). The fallback to full qgroups is covered
 * twice: a kernel refusing simple quotas (a {@link Subvolumes} that refuses like a kernel before
 * 6.7), and the CLI where btrfs-progs cannot ask for them (before 6.7; 6.2 here).
 */
@Tag("root")
class BtrfsDiskLimitIT {
    private static final FileOwner OWNER = new FileOwner(100000, 100000);
    private static final long MiB = 1L << 20;

    @TempDir
    Path dataDir;
    PoolFixture fixture;

    @BeforeEach
    void openPool() {
        fixture = PoolFixture.open(dataDir);
    }

    @AfterEach
    void closePool() {
        fixture.close();
    }

    @Test
    void simpleQuotasAreOnOnceThePoolIsOpenAndComeBackOnAnExistingPool() throws Exception {
        assertThat(quotaMode()).isEqualTo("squota");
        assertThat(fixture.store.quotaMode()).isEqualTo("squota");
        fixture.store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        // A pool made before there were disk limits (or whose quotas an operator turned off).
        btrfs("quota", "disable", fixture.pool.path().toString());
        assertThat(quotaMode()).isEqualTo("off");
        fixture.reopen();
        assertThat(quotaMode()).isEqualTo("squota");
        fixture.reopen(); // idempotent
        assertThat(quotaMode()).isEqualTo("squota");
        var id = SandboxId.random();
        Path root = fixture.store.createRoot(id, "tiny", 8 * MiB);
        assertThat(limits(root)).containsExactly(8 * MiB, 8 * MiB);
    }

    @Test
    void aPoolWithFullQuotasIsSwitchedToSimpleOnesAndItsRootsAreLimitedAgain() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = store.createRoot(id, "tiny", 8 * MiB);
        // The pool as the code before simple quotas left it: full qgroups, a referenced limit, data.
        btrfs("quota", "disable", fixture.pool.path().toString());
        btrfs("quota", "enable", fixture.pool.path().toString()); // btrfs-progs 6.2: full accounting
        btrfs("quota", "rescan", "-w", fixture.pool.path().toString());
        btrfs("qgroup", "limit", Long.toString(8 * MiB), root.toString());
        write(root.resolve("old"), 6 * MiB);
        assertThat(quotaMode()).isEqualTo("qgroup");

        fixture.reopen();
        assertThat(quotaMode()).isEqualTo("squota");
        // The kernel switches modes only through "off", which drops every qgroup's limit...
        assertThat(limits(fixture.pool.path().resolve("roots").resolve(id.value()))).containsExactly(0L, 0L);
        // ... so the service sets each root's limit again as it reconciles its sandboxes.
        fixture.store.limitRoot(id, 8 * MiB);
        assertThat(limits(root)).containsExactly(8 * MiB, 8 * MiB);
        // What the root held before the switch is charged to nobody: 7 MiB more fit in its 8.
        write(root.resolve("new"), 7 * MiB);
        assertThatThrownBy(() -> write(root.resolve("more"), 2 * MiB)).hasMessageContaining("Disk quota exceeded");
    }

    @Test
    void writingPastTheLimitFailsWithDiskQuotaExceededAndDeletingMakesRoom() throws Exception {
        fixture.store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = fixture.store.createRoot(id, "tiny", 8 * MiB);
        assertThat(limits(root)).containsExactly(8 * MiB, 8 * MiB);

        Path big = root.resolve("big");
        assertThatThrownBy(() -> write(big, 16 * MiB)).isInstanceOf(IOException.class).hasMessageContaining("Disk quota exceeded");
        assertThat(Files.size(big)).isGreaterThan(6 * MiB).isLessThan(8 * MiB);
        // Full, yet the root stays usable: reads work, and a delete frees the room at once (btrfs
        // commits the transaction before it gives up a write with EDQUOT).
        assertThat(root.resolve("etc/version")).hasContent("1");
        Files.delete(big);
        write(root.resolve("after"), 6 * MiB);
        assertThat(Files.size(root.resolve("after"))).isEqualTo(6 * MiB);
    }

    @Test
    void theTemplatesFilesDoNotCountAndDeletingThemFreesNothing() throws Exception {
        fixture.store.installTemplate(new BlobRecipe("fat", 4 * MiB), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = fixture.store.createRoot(id, "fat", 8 * MiB);
        // The template's 4 MiB are charged to the template: 7 MiB of the root's own fit in its 8...
        write(root.resolve("mine"), 7 * MiB);
        assertThatThrownBy(() -> write(root.resolve("more"), 4 * MiB)).hasMessageContaining("Disk quota exceeded");
        // ... and deleting the inherited blob gives none of them back...
        Files.delete(root.resolve("blob"));
        assertThatThrownBy(() -> write(root.resolve("after"), 2 * MiB)).hasMessageContaining("Disk quota exceeded");
        // ... while deleting what the root wrote does.
        Files.delete(root.resolve("more"));
        Files.delete(root.resolve("mine"));
        write(root.resolve("after"), 7 * MiB);
        // The template itself is untouched and has no limit.
        assertThat(Files.size(fixture.pool.path().resolve("templates/fat/blob"))).isEqualTo(4 * MiB);
        assertThat(limits(fixture.pool.path().resolve("templates/fat"))).containsExactly(0L, 0L);
    }

    @Test
    void aBranchFromACheckpointHasItsOwnLimitAndItsInheritedFilesDoNotCount() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var parent = SandboxId.random();
        Path parentRoot = store.createRoot(parent, "tiny", 64 * MiB);
        write(parentRoot.resolve("data"), 6 * MiB);
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(parent, checkpoint);
        // Under simple quotas a snapshot does not inherit its source's limit: nothing writes into it anyway.
        assertThat(limits(fixture.pool.path().resolve("checkpoints").resolve(checkpoint.value()))).containsExactly(0L, 0L);

        var branch = SandboxId.random();
        Path branchRoot = store.createRootFrom(branch, checkpoint, 10 * MiB);
        assertThat(limits(branchRoot)).containsExactly(10 * MiB, 10 * MiB);
        // The 6 MiB it inherited are the parent's: 9 of its own fit in its 10, and no more.
        write(branchRoot.resolve("mine"), 9 * MiB);
        assertThatThrownBy(() -> write(branchRoot.resolve("more"), 2 * MiB)).hasMessageContaining("Disk quota exceeded");
        Files.delete(branchRoot.resolve("data")); // inherited: frees nothing
        assertThatThrownBy(() -> write(branchRoot.resolve("more"), 2 * MiB)).hasMessageContaining("Disk quota exceeded");
        Files.delete(branchRoot.resolve("mine"));
        write(branchRoot.resolve("more"), 8 * MiB);
        // The parent's own limit is untouched by its branch.
        write(parentRoot.resolve("more"), 32 * MiB);
    }

    @Test
    void whatACheckpointHoldsStaysChargedToTheRootUntilTheCheckpointIsDeleted() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = store.createRoot(id, "tiny", 16 * MiB);
        write(root.resolve("data"), 10 * MiB);
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(id, checkpoint);
        // Deleted in the root, but the checkpoint still holds those blocks: still charged.
        Files.delete(root.resolve("data"));
        assertThatThrownBy(() -> write(root.resolve("more"), 10 * MiB)).hasMessageContaining("Disk quota exceeded");
        Files.delete(root.resolve("more"));

        store.deleteSnapshot(checkpoint);
        // The charge goes when the cleaner has dropped the snapshot and freed the blocks.
        btrfs("subvolume", "sync", fixture.pool.path().toString());
        btrfs("filesystem", "sync", fixture.pool.path().toString());
        write(root.resolve("more"), 14 * MiB);
    }

    @Test
    void limitRootChangesTheLimitOfAnExistingRootEvenAFullOne() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = store.createRoot(id, "tiny", 8 * MiB);
        // Filled to the last block: a limit call made from inside the root would itself get EDQUOT.
        assertThatThrownBy(() -> write(root.resolve("big"), 12 * MiB)).hasMessageContaining("Disk quota exceeded");
        store.limitRoot(id, 32 * MiB);
        assertThat(limits(root)).containsExactly(32 * MiB, 32 * MiB);
        write(root.resolve("big"), 12 * MiB);
        store.limitRoot(id, 32 * MiB); // idempotent
        store.limitRoot(id, 4 * MiB); // below what it holds: writes fail until enough is deleted
        assertThatThrownBy(() -> write(root.resolve("small"), MiB)).hasMessageContaining("Disk quota exceeded");
        Files.delete(root.resolve("big"));
        Files.deleteIfExists(root.resolve("small")); // the create itself may have been refused
        write(root.resolve("small"), MiB);

        var missing = SandboxId.random();
        assertThatThrownBy(() -> store.limitRoot(missing, 8 * MiB)).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
            assertThat(e.details()).containsEntry("sandbox", missing.value()).containsEntry("step", "limit root");
        });
    }

    @Test
    void aRootWhoseLimitCannotBeSetIsNotLeftBehind() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        btrfs("quota", "disable", fixture.pool.path().toString()); // behind the store's back
        var id = SandboxId.random();
        assertThatThrownBy(() -> store.createRoot(id, "tiny", 8 * MiB)).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
            assertThat(e.details()).containsEntry("sandbox", id.value()).containsEntry("step", "btrfs qgroup limit");
            assertThat(e.getMessage()).contains("quota");
        });
        assertThat(store.root(id)).isEmpty();
        assertThat(store.listRoots()).isEmpty();
    }

    @Test
    void theCliDoesTheSameAsTheIoctlsOnAPoolWithSimpleQuotas() throws Exception {
        var cli = new BtrfsRootStore(fixture.pool, Clock.systemUTC(), fixture.pool.btrfs());
        assertThat(cli.subvolumeBackend()).isEqualTo("cli");
        assertThat(cli.quotaMode()).isEqualTo("squota"); // kept, whatever the tools' version
        cli.installTemplate(new BlobRecipe("fat", 4 * MiB), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = cli.createRoot(id, "fat", 8 * MiB);
        assertThat(limits(root)).containsExactly(8 * MiB, 8 * MiB);
        assertThat(fixture.pool.btrfs().quotaMode(root)).isEqualTo("squota"); // a path below the mount point
        write(root.resolve("mine"), 7 * MiB); // the template's 4 MiB do not count
        assertThatThrownBy(() -> write(root.resolve("big"), 4 * MiB)).hasMessageContaining("Disk quota exceeded");
        cli.limitRoot(id, 16 * MiB); // a full root
        assertThat(limits(root)).containsExactly(16 * MiB, 16 * MiB);
        write(root.resolve("big"), 4 * MiB);
        cli.deleteRoot(id);
    }

    @Test
    void aKernelWithoutSimpleQuotasLeavesFullOnesOnAndTheSharedFilesCount() throws Exception {
        btrfs("quota", "disable", fixture.pool.path().toString());
        var ioctl = BtrfsIoctl.load().orElseThrow();
        var store = new BtrfsRootStore(fixture.pool, Clock.systemUTC(), new RefusingSimpleQuotas(ioctl));
        assertThat(store.quotaMode()).isEqualTo("qgroup");
        assertThat(quotaMode()).isEqualTo("qgroup");
        // Opened again: the switch to simple quotas goes through "off", the kernel refuses them
        // again, and full quotas come back on.
        var again = new BtrfsRootStore(fixture.pool, Clock.systemUTC(), new RefusingSimpleQuotas(ioctl));
        assertThat(again.quotaMode()).isEqualTo("qgroup");
        assertFullQuotasLimit(again);
    }

    @Test
    void btrfsProgsWithoutSimpleQuotasLeaveFullOnesOn() throws Exception {
        var cli = fixture.pool.btrfs();
        btrfs("quota", "disable", fixture.pool.path().toString());
        var store = new BtrfsRootStore(fixture.pool, Clock.systemUTC(), cli);
        if (cli.canEnableSimpleQuotas()) {
            assertThat(store.quotaMode()).as("btrfs-progs " + cli.version() + " turns simple quotas on").isEqualTo("squota");
            return;
        }
        assertThat(store.quotaMode()).as("btrfs-progs " + cli.version()).isEqualTo("qgroup");
        assertThat(quotaMode()).isEqualTo("qgroup");
        assertFullQuotasLimit(store);
    }

    /** Under full quotas the limit binds on referenced bytes: the template's 4 MiB count in a root of 8. */
    private void assertFullQuotasLimit(BtrfsRootStore store) throws Exception {
        btrfs("quota", "rescan", "-w", fixture.pool.path().toString());
        store.installTemplate(new BlobRecipe("fat", 4 * MiB), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = store.createRoot(id, "fat", 8 * MiB);
        assertThat(limits(root)).containsExactly(8 * MiB, 8 * MiB);
        assertThatThrownBy(() -> write(root.resolve("more"), 5 * MiB)).hasMessageContaining("Disk quota exceeded");
        Files.delete(root.resolve("more"));
        Files.delete(root.resolve("blob"));
        write(root.resolve("more"), 5 * MiB);
        store.deleteRoot(id);
    }

    /** The ioctls of a kernel before 6.7: {@code BTRFS_QUOTA_CTL_ENABLE_SIMPLE_QUOTA} is an unknown command. */
    private record RefusingSimpleQuotas(Subvolumes real) implements Subvolumes {
        @Override
        public void enableSimpleQuotas(Path anyPath) {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "btrfs quota enable --simple failed: errno 22 (Invalid argument)",
                    Map.of("step", "btrfs quota enable --simple", "errno", 22), null);
        }

        @Override
        public void disableQuotas(Path anyPath) {
            real.disableQuotas(anyPath);
        }

        @Override
        public boolean canEnableSimpleQuotas() {
            return true;
        }

        @Override
        public void create(Path path) {
            real.create(path);
        }

        @Override
        public void snapshot(Path source, Path target, boolean readOnly) {
            real.snapshot(source, target, readOnly);
        }

        @Override
        public void delete(Path path) {
            real.delete(path);
        }

        @Override
        public void sync(Path anyPath) {
            real.sync(anyPath);
        }

        @Override
        public void enableQuotas(Path anyPath) {
            real.enableQuotas(anyPath);
        }

        @Override
        public void limit(Path subvolume, long bytes) {
            real.limit(subvolume, bytes);
        }

        @Override
        public Optional<String> filesystemId(Path anyPath) {
            return real.filesystemId(anyPath);
        }

        @Override
        public String kind() {
            return "ioctl refusing simple quotas";
        }
    }

    /** A template of one file of random bytes (nothing to compress or share). */
    private record BlobRecipe(String name, long bytes) implements TemplateRecipe {
        @Override
        public String version() {
            return "1";
        }

        @Override
        public String description() {
            return "one blob";
        }

        @Override
        public void populate(Path dir, Progress progress) throws Exception {
            write(dir.resolve("blob"), bytes);
        }
    }

    /** Writes {@code bytes} of random data in 1 MiB steps, as dd would. */
    private static void write(Path file, long bytes) throws IOException {
        var random = new Random(1);
        byte[] chunk = new byte[(int) MiB];
        try (var channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            for (long written = 0; written < bytes; written += chunk.length) {
                random.nextBytes(chunk);
                var buffer = ByteBuffer.wrap(chunk, 0, (int) Math.min(chunk.length, bytes - written));
                while (buffer.hasRemaining()) channel.write(buffer);
            }
        }
    }

    /** {@code max_rfer} and {@code max_excl} of the subvolume's qgroup as the btrfs CLI shows them (0: none). */
    private static List<Long> limits(Path subvolume) throws Exception {
        String out = btrfs("qgroup", "show", "-reF", "--raw", subvolume.toString());
        for (String line : out.lines().toList()) {
            if (!line.startsWith("0/")) continue;
            String[] columns = line.trim().split("\\s+");
            return List.of(limitValue(columns[3]), limitValue(columns[4]));
        }
        throw new AssertionError("no qgroup line for " + subvolume + " in:\n" + out);
    }

    private static long limitValue(String column) {
        return column.equals("none") ? 0 : Long.parseLong(column);
    }

    /** The kernel's word on the pool's quotas: {@code qgroup}, {@code squota}, or {@code off}. */
    private String quotaMode() {
        String fsid = BtrfsIoctl.load().orElseThrow().filesystemId(fixture.pool.path()).orElseThrow();
        return QuotaState.read(QuotaState.SYSFS, fsid).map(QuotaState::mode).orElse("off");
    }

    private static String btrfs(String... args) throws Exception {
        var argv = new ArrayList<>(List.of(ToolRunner.locate("btrfs").toString()));
        argv.addAll(List.of(args));
        var result = ToolRunner.run(argv, Duration.ofSeconds(60));
        if (result.exitCode() != 0) throw new AssertionError(argv + " failed: " + result.stderrTail());
        return result.stdoutText();
    }
}
