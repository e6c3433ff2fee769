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
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Disk limits: quotas on the pool, a referenced-bytes limit on every root, writes past it failing
 * with EDQUOT, and deleting files making room again. Writes here come from the host (as root):
 * btrfs quotas apply to every writer, so this is what a sandbox sees too (the server's
 * {@code SandboxApiIT} checks it with dd inside a real sandbox).
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
    void quotasAreOnOnceThePoolIsOpenAndComeBackOnAnExistingPool() throws Exception {
        assertThat(quotaMode()).isEqualTo("qgroup");
        fixture.store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        // A pool made before there were disk limits (or whose quotas an operator turned off).
        btrfs("quota", "disable", fixture.pool.path().toString());
        assertThat(quotaMode()).isEqualTo("off");
        fixture.reopen();
        assertThat(quotaMode()).isEqualTo("qgroup");
        fixture.reopen(); // idempotent
        var id = SandboxId.random();
        Path root = fixture.store.createRoot(id, "tiny", 8 * MiB);
        assertThat(maxReferenced(root)).isEqualTo(8 * MiB);
    }

    @Test
    void writingPastTheLimitFailsWithDiskQuotaExceededAndDeletingMakesRoom() throws Exception {
        fixture.store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = fixture.store.createRoot(id, "tiny", 8 * MiB);
        assertThat(maxReferenced(root)).isEqualTo(8 * MiB);

        Path big = root.resolve("big");
        assertThatThrownBy(() -> write(big, 16 * MiB)).isInstanceOf(IOException.class).hasMessageContaining("Disk quota exceeded");
        assertThat(Files.size(big)).isLessThan(8 * MiB);
        // Full, yet the root stays usable: reads work, and a delete frees the room at once (btrfs
        // commits the transaction before it gives up a write with EDQUOT).
        assertThat(root.resolve("etc/version")).hasContent("1");
        Files.delete(big);
        write(root.resolve("after"), 4 * MiB);
        assertThat(Files.size(root.resolve("after"))).isEqualTo(4 * MiB);
    }

    @Test
    void theTemplatesFilesCountAsTheyDoOnARealDisk() throws Exception {
        fixture.store.installTemplate(new BlobRecipe("fat", 4 * MiB), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = fixture.store.createRoot(id, "fat", 8 * MiB);
        // 4 MiB of the 8 are the template's: 3 more do not fit...
        assertThatThrownBy(() -> write(root.resolve("more"), 5 * MiB)).hasMessageContaining("Disk quota exceeded");
        Files.delete(root.resolve("more"));
        // ... until the inherited blob is deleted: a referenced limit, not an exclusive one.
        Files.delete(root.resolve("blob"));
        write(root.resolve("more"), 5 * MiB);
        // The template itself is untouched and has no limit.
        assertThat(Files.size(fixture.pool.path().resolve("templates/fat/blob"))).isEqualTo(4 * MiB);
        assertThat(maxReferenced(fixture.pool.path().resolve("templates/fat"))).isZero();
    }

    @Test
    void aBranchFromACheckpointHasItsOwnLimit() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var parent = SandboxId.random();
        Path parentRoot = store.createRoot(parent, "tiny", 64 * MiB);
        write(parentRoot.resolve("data"), 6 * MiB);
        var checkpoint = CheckpointId.random();
        store.snapshotRoot(parent, checkpoint);
        // btrfs copies a subvolume's limit into its snapshots: harmless on a read-only one.
        assertThat(maxReferenced(fixture.pool.path().resolve("checkpoints").resolve(checkpoint.value()))).isEqualTo(64 * MiB);

        var branch = SandboxId.random();
        Path branchRoot = store.createRootFrom(branch, checkpoint, 10 * MiB);
        assertThat(maxReferenced(branchRoot)).isEqualTo(10 * MiB);
        // The 6 MiB it inherited count: 6 more do not fit in its 10, though they would in its parent's 64.
        assertThatThrownBy(() -> write(branchRoot.resolve("more"), 6 * MiB)).hasMessageContaining("Disk quota exceeded");
        write(parentRoot.resolve("more"), 6 * MiB);
    }

    @Test
    void limitRootChangesTheLimitOfAnExistingRoot() throws Exception {
        var store = fixture.store;
        store.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = store.createRoot(id, "tiny", 8 * MiB);
        assertThatThrownBy(() -> write(root.resolve("big"), 12 * MiB)).hasMessageContaining("Disk quota exceeded");
        store.limitRoot(id, 32 * MiB);
        assertThat(maxReferenced(root)).isEqualTo(32 * MiB);
        write(root.resolve("big"), 12 * MiB);
        store.limitRoot(id, 32 * MiB); // idempotent

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
    void theCliDoesTheSameAsTheIoctls() throws Exception {
        var cli = new BtrfsRootStore(fixture.pool, java.time.Clock.systemUTC(), fixture.pool.btrfs());
        assertThat(cli.subvolumeBackend()).isEqualTo("cli");
        cli.installTemplate(TestRecipe.of("tiny", "1"), OWNER, TemplateRecipe.Progress.NONE);
        var id = SandboxId.random();
        Path root = cli.createRoot(id, "tiny", 8 * MiB);
        assertThat(maxReferenced(root)).isEqualTo(8 * MiB);
        assertThatThrownBy(() -> write(root.resolve("big"), 12 * MiB)).hasMessageContaining("Disk quota exceeded");
        cli.limitRoot(id, 16 * MiB);
        assertThat(maxReferenced(root)).isEqualTo(16 * MiB);
        cli.deleteRoot(id);
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

    /** {@code max_rfer} of the subvolume's qgroup as the btrfs CLI shows it (0: none). */
    private static long maxReferenced(Path subvolume) throws Exception {
        String out = btrfs("qgroup", "show", "-rF", "--raw", subvolume.toString());
        for (String line : out.lines().toList()) {
            if (!line.startsWith("0/")) continue;
            String max = line.trim().split("\\s+")[3];
            return max.equals("none") ? 0 : Long.parseLong(max);
        }
        throw new AssertionError("no qgroup line for " + subvolume + " in:\n" + out);
    }

    /** The kernel's word on the pool's quotas: {@code qgroup}, {@code squota}, or {@code off}. */
    private String quotaMode() {
        String fsid = BtrfsIoctl.load().orElseThrow().filesystemId(fixture.pool.path()).orElseThrow();
        return QuotaState.read(QuotaState.SYSFS, fsid).map(QuotaState::mode).orElse("off");
    }

    private static String btrfs(String... args) throws Exception {
        var argv = new java.util.ArrayList<>(List.of(ToolRunner.locate("btrfs").toString()));
        argv.addAll(List.of(args));
        var result = ToolRunner.run(argv, Duration.ofSeconds(60));
        if (result.exitCode() != 0) throw new AssertionError(argv + " failed: " + result.stderrTail());
        return result.stdoutText();
    }
}
