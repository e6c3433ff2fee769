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
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
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
    void whatADeletedRootsForksStillHoldIsChargedToTheOldestForkAndPassesOnWhenItGoes() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var parent = SandboxId.random();
        Path parentRoot = store.createRoot(parent, "tiny", 64 * MiB);
        write(parentRoot.resolve("data"), 6 * MiB);
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(parent, checkpoint);
        var first = SandboxId.random();
        Path firstRoot = store.createRootFrom(first, checkpoint, 10 * MiB);
        var second = SandboxId.random();
        Path secondRoot = store.createRootFrom(second, checkpoint, 10 * MiB);
        write(firstRoot.resolve("mine"), 2 * MiB);
        write(secondRoot.resolve("mine"), 4 * MiB);
        store.settleInheritedCharges();
        assertThat(heirGroups()).as("the parent lives and pays for its own writes").isEmpty();

        long parentId = subvolumeId(parentRoot);
        store.deleteRoot(parent);
        store.settleInheritedCharges();
        // The oldest fork carries the parent's 6 MiB with its own 2 in its 10...
        long firstId = subvolumeId(firstRoot);
        assertThat(heirGroups()).isEqualTo(Map.of(firstId, Set.of(firstId, parentId)));
        assertRoomBetween(firstRoot, MiB, 4 * MiB);
        // ... while the other fork keeps its whole limit for its own writes.
        write(secondRoot.resolve("more"), 4 * MiB);
        Files.delete(secondRoot.resolve("more"));
        store.settleInheritedCharges(); // nothing changed: nothing done
        assertThat(heirGroups()).containsOnlyKeys(firstId);

        // A larger limit for the heir is its group's too, at once.
        store.limitRoot(first, 32 * MiB);
        write(firstRoot.resolve("more"), 8 * MiB);
        Files.delete(firstRoot.resolve("more"));

        // The heir deleted: the other fork inherits, and with its own 4 MiB and the parent's 6 its 10 are full.
        store.deleteRoot(first);
        store.settleInheritedCharges();
        long secondId = subvolumeId(secondRoot);
        assertThat(heirGroups()).containsOnlyKeys(secondId);
        assertThatThrownBy(() -> write(secondRoot.resolve("more"), 2 * MiB)).hasMessageContaining("Disk quota exceeded");
        Files.deleteIfExists(secondRoot.resolve("more"));
        // Deleting the inherited file frees nothing while the checkpoint holds it; once neither does, the room is back.
        store.deleteSnapshot(checkpoint);
        Files.delete(secondRoot.resolve("data"));
        btrfs("subvolume", "sync", fixture.pool.path().toString());
        btrfs("filesystem", "sync", fixture.pool.path().toString());
        write(secondRoot.resolve("more"), 4 * MiB);

        store.deleteRoot(second);
        store.settleInheritedCharges();
        assertThat(heirGroups()).as("no heir left, no group left").isEmpty();
    }

    @Test
    void aChainOfForkAndDeleteChargesEveryDeletedLinkToTheLastLiveRoot() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var a = SandboxId.random();
        Path aRoot = store.createRoot(a, "tiny", 16 * MiB);
        write(aRoot.resolve("a"), 3 * MiB);
        var fromA = CheckpointId.random();
        store.snapshotRoot(a, fromA);
        long fromAId = subvolumeId(fixture.pool.path().resolve("checkpoints").resolve(fromA.value()));
        var b = SandboxId.random();
        Path bRoot = store.createRootFrom(b, fromA, 16 * MiB);
        write(bRoot.resolve("b"), 4 * MiB);
        long aId = subvolumeId(aRoot), bId = subvolumeId(bRoot);
        var fromB = CheckpointId.random();
        store.snapshotRoot(b, fromB);
        store.deleteSnapshot(fromA); // only the chain of roots holds a's data now
        var c = SandboxId.random();
        Path cRoot = store.createRootFrom(c, fromB, 16 * MiB);
        write(cRoot.resolve("c"), MiB);
        // Each link alone could write 15 MiB more; deleted, a's 3 and b's 4 fall to c: 1 + 3 + 4 of its 16.
        store.deleteRoot(a);
        store.deleteRoot(b);
        store.settleInheritedCharges();
        // The deleted checkpoint's group too: the snapshot's own tree root, which b's tree still shares.
        long cId = subvolumeId(cRoot);
        assertThat(heirGroups()).isEqualTo(Map.of(cId, Set.of(cId, aId, fromAId, bId)));
        assertRoomBetween(cRoot, 5 * MiB, 10 * MiB);
        store.deleteRoot(c);
        store.deleteSnapshot(fromB);
    }

    @Test
    void aRestoredRootInheritsTheOneItReplacedSoARestoreGivesNoFreshRoom() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        write(store.createRoot(id, "tiny", 16 * MiB).resolve("data"), 10 * MiB);
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(id, checkpoint);
        Path root = store.replaceRoot(id, checkpoint, 16 * MiB);
        store.deleteReplacedRoot(id);
        store.settleInheritedCharges();
        assertRoomBetween(root, 4 * MiB, 8 * MiB);
        store.deleteRoot(id);
        store.deleteSnapshot(checkpoint);
    }

    @Test
    void aPassCutShortOrGroupsLeftByAnotherRunAreSetRightByTheNextPassAfterAnOpen() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var parent = SandboxId.random();
        Path parentRoot = store.createRoot(parent, "tiny", 64 * MiB);
        write(parentRoot.resolve("data"), 6 * MiB);
        long parentId = subvolumeId(parentRoot);
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(parent, checkpoint);
        var fork = SandboxId.random();
        Path forkRoot = store.createRootFrom(fork, checkpoint, 10 * MiB);
        long forkId = subvolumeId(forkRoot);
        store.deleteRoot(parent);
        // A run killed mid-pass: the heir's group made and half filled; and a group of a heir long gone.
        String pool = fixture.pool.path().toString();
        btrfs("qgroup", "create", "1/" + forkId, pool);
        btrfs("qgroup", "assign", "--no-rescan", "0/" + forkId, "1/" + forkId, pool);
        btrfs("qgroup", "create", "1/99999", pool);
        btrfs("qgroup", "assign", "--no-rescan", "0/" + parentId, "1/99999", pool);

        fixture.reopen();
        fixture.store.settleInheritedCharges();
        assertThat(heirGroups()).isEqualTo(Map.of(forkId, Set.of(forkId, parentId)));
        assertThatThrownBy(() -> write(forkRoot.resolve("more"), 6 * MiB)).hasMessageContaining("Disk quota exceeded");
        fixture.store.settleInheritedCharges(); // idempotent
        assertThat(heirGroups()).isEqualTo(Map.of(forkId, Set.of(forkId, parentId)));
    }

    @Test
    void onAFullPoolCheckpointsAndForksStillWorkAndTheirLineageIsWrittenOnceThereIsRoom() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var parent = SandboxId.random();
        Path parentRoot = store.createRoot(parent, "tiny", 64 * MiB);
        write(parentRoot.resolve("data"), 6 * MiB);
        long parentId = subvolumeId(parentRoot);
        Path filler = fixture.pool.path().resolve("filler");
        try {
            fill(filler);
            // A snapshot and a fork need no room on the pool, but their lineage files do: kept in memory meanwhile.
            var checkpoint = CheckpointId.random();
            store.snapshotRoot(parent, checkpoint);
            var fork = SandboxId.random();
            Path forkRoot = store.createRootFrom(fork, checkpoint, 10 * MiB);
            assertThat(Lineage.fileOf(forkRoot)).doesNotExist();
            store.deleteRoot(parent);
            store.settleInheritedCharges();
            long forkId = subvolumeId(forkRoot);
            assertThat(heirGroups()).isEqualTo(Map.of(forkId, Set.of(forkId, parentId)));

            Files.delete(filler);
            btrfs("filesystem", "sync", fixture.pool.path().toString());
            store.settleInheritedCharges(); // nothing changed, but lineages wait to be written
            assertThat(Lineage.read(forkRoot)).map(Lineage::ancestors).contains(List.of(
                    subvolumeId(fixture.pool.path().resolve("checkpoints").resolve(checkpoint.value())), parentId));
            fixture.reopen(); // written: a restart knows them
            fixture.store.settleInheritedCharges();
            assertThat(heirGroups()).isEqualTo(Map.of(forkId, Set.of(forkId, parentId)));
        } finally {
            Files.deleteIfExists(filler);
        }
    }

    /** Fills the pool (outside any root, so no limit stops it) until btrfs says it has no room. */
    private static void fill(Path file) throws IOException {
        try {
            write(file, 4L << 30);
        } catch (IOException e) {
            if (!String.valueOf(e.getMessage()).contains("No space left")) throw e;
        }
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
        // What a deleted root's fork holds is charged to the fork, through the tools.
        var checkpoint = CheckpointId.random();
        cli.snapshotRoot(id, checkpoint);
        var fork = SandboxId.random();
        Path forkRoot = cli.createRootFrom(fork, checkpoint, 16 * MiB);
        cli.deleteRoot(id);
        cli.settleInheritedCharges();
        assertThat(heirGroups()).containsOnlyKeys(subvolumeId(forkRoot));
        assertThatThrownBy(() -> write(forkRoot.resolve("more"), 8 * MiB)).hasMessageContaining("Disk quota exceeded");
        cli.deleteRoot(fork);
        cli.deleteSnapshot(checkpoint);
        cli.settleInheritedCharges();
        assertThat(heirGroups()).isEmpty();
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

    /** {@code refused} bytes more do not fit in {@code root} (EDQUOT), {@code fits} do; what the test wrote stays, as {@code more}. */
    private static void assertRoomBetween(Path root, long fits, long refused) throws IOException {
        assertThatThrownBy(() -> write(root.resolve("more"), refused)).hasMessageContaining("Disk quota exceeded");
        Files.delete(root.resolve("more"));
        write(root.resolve("more"), fits);
    }

    /** Each level 1 group of the pool (named after its heir's subvolume id) with its members' subvolume ids. */
    private Map<Long, Set<Long>> heirGroups() throws Exception {
        var groups = new TreeMap<Long, Set<Long>>();
        for (String line : btrfs("qgroup", "show", "-p", "--raw", fixture.pool.path().toString()).lines().toList()) {
            String[] columns = line.trim().split("\\s+");
            if (columns.length < 4 || !columns[0].matches("\\d+/\\d+")) continue;
            if (columns[0].startsWith("1/")) groups.computeIfAbsent(Long.parseLong(columns[0].substring(2)), k -> new TreeSet<>());
            for (String parent : columns[3].split(","))
                if (parent.startsWith("1/"))
                    groups.computeIfAbsent(Long.parseLong(parent.substring(2)), k -> new TreeSet<>()).add(Long.parseLong(columns[0].substring(2)));
        }
        return groups;
    }

    private static long subvolumeId(Path subvolume) throws Exception {
        return Long.parseLong(btrfs("inspect-internal", "rootid", subvolume.toString()).strip());
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
