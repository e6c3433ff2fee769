package io.stasis.testkit;

import io.stasis.core.sandbox.RuntimeKind;
import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.blob.ManifestId;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointUpload;
import io.stasis.core.checkpoint.DurableImage;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What every {@link Catalog} must do with checkpoints, as the SQLite catalog does it: their
 * records and order, their spares, the uploads of durable checkpoints and each sandbox's newest
 * durable image. A backend's test extends this and supplies a fresh, empty catalog per test.
 */
public abstract class CheckpointCatalogSuite extends CatalogSuiteBase<Catalog> {

    // --- checkpoints ---

    @Test
    void checkpointsRoundTripEveryField() {
        var sandbox = SandboxId.random();
        var named = new Checkpoint(CheckpointId.random(), sandbox, Optional.of("before upgrade ✓"), true,
                Checkpoint.Purpose.USER, 5_000_000_000L, Instant.parse("2026-01-02T03:04:05.000000007Z"), RuntimeKind.RUNC);
        var hibernation = new Checkpoint(CheckpointId.random(), sandbox, Optional.empty(), true,
                Checkpoint.Purpose.HIBERNATION, 1, T0, RuntimeKind.RUNC);
        var rootOnly = new Checkpoint(CheckpointId.random(), sandbox, Optional.empty(), false,
                Checkpoint.Purpose.FORK, 0, Instant.EPOCH, RuntimeKind.RUNC);
        var all = new ArrayList<Checkpoint>(List.of(named, hibernation, rootOnly));
        for (var purpose : Checkpoint.Purpose.values())
            all.add(new Checkpoint(CheckpointId.random(), sandbox, Optional.empty(), false, purpose, 2, T0.plusSeconds(1), RuntimeKind.RUNC));

        all.forEach(catalog()::insertCheckpoint);

        for (var c : all) assertThat(catalog().findCheckpoint(c.id())).contains(c);
        assertThat(catalog().findCheckpoint(CheckpointId.random())).isEmpty();
    }

    @Test
    void listsOneSandboxsCheckpointsOrAllOldestFirst() {
        var a = SandboxId.random();
        var b = SandboxId.random();
        var a3 = CatalogFixtures.checkpoint(a, T0.plusSeconds(3));
        var a1 = CatalogFixtures.checkpoint(a, T0.plusSeconds(1));
        // Same instant: ordered by id (fixed ids, so that the order does not depend on random ones).
        var b2 = CatalogFixtures.checkpoint("ckpt_3333333333333333", b, T0.plusSeconds(2));
        var tie1 = CatalogFixtures.checkpoint("ckpt_1111111111111111", a, T0.plusSeconds(2));
        var tie2 = CatalogFixtures.checkpoint("ckpt_2222222222222222", a, T0.plusSeconds(2));
        for (var c : List.of(a3, tie2, b2, a1, tie1)) catalog().insertCheckpoint(c);

        assertThat(catalog().checkpointsOf(a)).containsExactly(a1, tie1, tie2, a3);
        assertThat(catalog().checkpointsOf(b)).containsExactly(b2);
        assertThat(catalog().checkpointsOf(SandboxId.random())).isEmpty();
        assertThat(catalog().allCheckpoints()).containsExactly(a1, tie1, tie2, b2, a3);
    }

    @Test
    void checkpointNamesNeedNotBeUnique() {
        var s = SandboxId.random();
        var first = new Checkpoint(CheckpointId.random(), s, Optional.of("same"), true, Checkpoint.Purpose.USER, 1, T0, RuntimeKind.RUNC);
        var second = new Checkpoint(CheckpointId.random(), s, Optional.of("same"), true, Checkpoint.Purpose.USER, 2, T0.plusSeconds(1), RuntimeKind.RUNC);
        catalog().insertCheckpoint(first);
        catalog().insertCheckpoint(second);
        assertThat(catalog().checkpointsOf(s)).containsExactly(first, second);
    }

    @Test
    void aDuplicateCheckpointIdIsInternalAndKeepsTheFirst() {
        var c = CatalogFixtures.checkpoint(SandboxId.random(), T0);
        catalog().insertCheckpoint(c);
        var clash = new Checkpoint(c.id(), SandboxId.random(), Optional.empty(), false, Checkpoint.Purpose.FORK, 0, T0, RuntimeKind.RUNC);

        assertThatThrownBy(() -> catalog().insertCheckpoint(clash))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL);
                    assertThat(e.details()).containsEntry("checkpoint", c.id().value());
                });
        assertThat(catalog().allCheckpoints()).containsExactly(c);
    }

    @Test
    void deleteCheckpointIsIdempotentAndTouchesOnlyThatCheckpoint() {
        var s = SandboxId.random();
        var gone = CatalogFixtures.checkpoint(s, T0);
        var kept = CatalogFixtures.checkpoint(s, T0.plusSeconds(1));
        catalog().insertCheckpoint(gone);
        catalog().insertCheckpoint(kept);

        catalog().deleteCheckpoint(gone.id());
        catalog().deleteCheckpoint(gone.id());
        catalog().deleteCheckpoint(CheckpointId.random());

        assertThat(catalog().findCheckpoint(gone.id())).isEmpty();
        assertThat(catalog().allCheckpoints()).containsExactly(kept);
    }

    @Test
    void sparesAreKeptPerCheckpointListedOldestFirstAndGoWithIt() {
        var s = SandboxId.random();
        var late = CatalogFixtures.checkpoint(s, T0.plusSeconds(2));
        var early = CatalogFixtures.checkpoint(s, T0);
        var none = CatalogFixtures.checkpoint(s, T0.plusSeconds(1));
        List.of(late, early, none).forEach(catalog()::insertCheckpoint);
        assertThat(catalog().checkpointSpares()).isEmpty();

        catalog().setCheckpointSpares(late.id(), 2);
        catalog().setCheckpointSpares(early.id(), 5);
        catalog().setCheckpointSpares(CheckpointId.random(), 3); // gone: nothing to record
        assertThat(catalog().checkpointSpares()).containsExactly(Map.entry(early.id(), 5), Map.entry(late.id(), 2));
        assertThat(catalog().findCheckpoint(early.id())).as("spares are not part of the record").contains(early);

        catalog().setCheckpointSpares(early.id(), 1);
        catalog().setCheckpointSpares(late.id(), 0);
        assertThat(catalog().checkpointSpares()).containsExactly(Map.entry(early.id(), 1));
        assertThatThrownBy(() -> catalog().setCheckpointSpares(early.id(), -1))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog().checkpointSpares()).containsExactly(Map.entry(early.id(), 1));

        catalog().deleteCheckpoint(early.id());
        assertThat(catalog().checkpointSpares()).isEmpty();
        catalog().insertCheckpoint(early);
        assertThat(catalog().checkpointSpares()).as("a checkpoint starts with none").isEmpty();
    }

    // --- uploads and durable images ---

    @Test
    void uploadsRoundTripAreReplacedListedByCheckpointIdAndOutliveTheirCheckpoint() {
        var checkpoint = CatalogFixtures.checkpoint(SandboxId.random(), T0);
        catalog().insertCheckpoint(checkpoint);
        assertThat(catalog().findUpload(checkpoint.id())).isEmpty();
        var pending = CheckpointUpload.pending(checkpoint.id(), T0);
        catalog().recordUpload(pending);
        assertThat(catalog().findUpload(checkpoint.id())).contains(pending);

        var durable = new CheckpointUpload(checkpoint.id(), CheckpointUpload.State.DURABLE, Optional.of(CheckpointId.random()),
                Optional.of(manifest('a')), Optional.of(manifest('b')), 5_000_000_000L, 1234, Optional.empty(), T0.plusSeconds(9));
        catalog().recordUpload(durable);
        assertThat(catalog().findUpload(checkpoint.id())).contains(durable);

        var failed = new CheckpointUpload(new CheckpointId("ckpt_0000000000000000"), CheckpointUpload.State.FAILED, Optional.empty(),
                Optional.of(manifest('c')), Optional.empty(), 10, 0, Optional.of("the store said no ✗"), T0.plusSeconds(20));
        var last = CheckpointUpload.pending(new CheckpointId("ckpt_ffffffffffffffff"), T0.minusSeconds(5));
        catalog().recordUpload(last);
        catalog().recordUpload(failed);
        assertThat(catalog().findUpload(failed.checkpoint())).contains(failed);
        var byId = new ArrayList<>(List.of(durable, failed, last));
        byId.sort(Comparator.comparing(CheckpointUpload::checkpoint));
        assertThat(catalog().allUploads()).containsExactlyElementsOf(byId);

        catalog().deleteCheckpoint(checkpoint.id());
        assertThat(catalog().findUpload(checkpoint.id())).as("the service removes it itself").contains(durable);
        catalog().deleteUpload(checkpoint.id());
        catalog().deleteUpload(checkpoint.id());
        catalog().deleteUpload(CheckpointId.random());
        assertThat(catalog().findUpload(checkpoint.id())).isEmpty();
        assertThat(catalog().allUploads()).containsExactly(failed, last);
    }

    @Test
    void theNewestDurableImageOfASandboxWinsWhateverOrderUploadsEndIn() {
        var sandbox = CatalogFixtures.running(T0);
        catalog().insert(sandbox);
        assertThat(catalog().durableImage(sandbox.id())).isEmpty();
        var older = new DurableImage(CheckpointId.random(), "sha256:" + "a".repeat(64), T0.plusSeconds(1));
        var newer = new DurableImage(CheckpointId.random(), "sha256:" + "b".repeat(64), T0.plusSeconds(2));
        catalog().recordDurableImage(sandbox.id(), newer);
        catalog().recordDurableImage(sandbox.id(), older);
        assertThat(catalog().durableImage(sandbox.id())).contains(newer);
        var sameInstant = new DurableImage(CheckpointId.random(), "sha256:" + "d".repeat(64), T0.plusSeconds(2));
        catalog().recordDurableImage(sandbox.id(), sameInstant);
        assertThat(catalog().durableImage(sandbox.id())).as("taken no earlier: kept").contains(sameInstant);
        var newest = new DurableImage(CheckpointId.random(), "sha256:" + "c".repeat(64), T0.plusSeconds(3));
        catalog().recordDurableImage(sandbox.id(), newest);
        assertThat(catalog().durableImage(sandbox.id())).contains(newest);
        catalog().update(sandbox.withState(SandboxState.PAUSED));
        assertThat(catalog().durableImage(sandbox.id())).as("a change of the sandbox's record keeps it").contains(newest);
        assertThat(catalog().durableImage(SandboxId.random())).isEmpty();
        catalog().delete(sandbox.id());
        assertThat(catalog().durableImage(sandbox.id())).as("forgotten with the sandbox").isEmpty();
    }

    // --- helpers ---

    private static ManifestId manifest(char digit) {
        return ManifestId.parse(String.valueOf(digit).repeat(64));
    }
}
