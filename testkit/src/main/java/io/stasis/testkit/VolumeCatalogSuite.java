package io.stasis.testkit;

import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.auth.TokenScope;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.VolumeCatalog;
import io.stasis.core.spi.VolumeCatalog.Mounter;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.core.volume.Volume;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeMount;
import io.stasis.core.volume.VolumeSnapshot;
import io.stasis.core.volume.VolumeSnapshotId;
import io.stasis.core.volume.VolumeSync;
import io.stasis.core.volume.VolumeSyncId;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * What every {@link VolumeCatalog} must do, as the SQLite catalog does it: volumes per tenant,
 * their snapshots and syncs, which sandbox mounts which, what goes with a deleted volume or
 * sandbox, and that a tenant holding a volume is not deleted. A backend's test extends this and
 * supplies a fresh, empty catalog per test (also a {@link Catalog}: mounts, usage and tenants
 * involve sandboxes); the suite closes it.
 */
public abstract class VolumeCatalogSuite<C extends Catalog & VolumeCatalog> extends CatalogSuiteBase<C> {
    @Test
    void volumesRoundTripAndAreListedPerTenantOldestFirst() {
        var a = TenantId.random();
        var late = new Volume(VolumeId.random(), a, "data", 1L << 20, T0.plusSeconds(2), Optional.of("vsnap_0123456789abcdef"));
        var early = CatalogFixtures.volume(a, "cache ✓", T0);
        var tieA = new Volume(new VolumeId("vol_aaaaaaaaaaaaaaaa"), a, "tie-a", 1, T0.plusSeconds(1), Optional.empty());
        var tieB = new Volume(new VolumeId("vol_bbbbbbbbbbbbbbbb"), a, "tie-b", 1, T0.plusSeconds(1), Optional.empty());
        var ofDefault = CatalogFixtures.volume(TenantId.DEFAULT, "data", T0.plusMillis(1500));
        List.of(late, tieB, ofDefault, early, tieA).forEach(catalog()::insertVolume);

        assertThat(catalog().findVolume(late.id())).contains(late);
        assertThat(catalog().findVolume(VolumeId.random())).isEmpty();
        assertThat(catalog().findVolumeByName(a, "data")).contains(late);
        assertThat(catalog().findVolumeByName(TenantId.DEFAULT, "data")).contains(ofDefault);
        assertThat(catalog().findVolumeByName(TenantId.random(), "data")).isEmpty();
        assertThat(catalog().volumesOf(a)).containsExactly(early, tieA, tieB, late);
        assertThat(catalog().volumesOf(TenantId.DEFAULT)).containsExactly(ofDefault);
        assertThat(catalog().volumesOf(TenantId.random())).isEmpty();
        assertThat(catalog().allVolumes()).containsExactly(early, tieA, tieB, ofDefault, late);
    }

    @Test
    void aVolumeNameIsUniquePerTenantAndAnIdOnce() {
        var a = TenantId.random();
        var first = CatalogFixtures.volume(a, "data", T0);
        catalog().insertVolume(first);
        catalog().insertVolume(CatalogFixtures.volume(TenantId.random(), "data", T0)); // another tenant's: fine

        assertThatThrownBy(() -> catalog().insertVolume(CatalogFixtures.volume(a, "data", T0.plusSeconds(1))))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                    assertThat(e.details()).containsEntry("name", "data");
                });
        var sameId = new Volume(first.id(), a, "other", 1, T0, Optional.empty());
        assertThatThrownBy(() -> catalog().insertVolume(sameId))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog().volumesOf(a)).containsExactly(first);
    }

    @Test
    void deleteVolumeTakesItsSnapshotsSyncsMountsAndTokensAndNothingElse() {
        var gone = CatalogFixtures.volume(TenantId.DEFAULT, "gone", T0);
        var kept = CatalogFixtures.volume(TenantId.DEFAULT, "kept", T0.plusSeconds(1));
        catalog().insertVolume(gone);
        catalog().insertVolume(kept);
        var goneSnapshot = new VolumeSnapshot(VolumeSnapshotId.random(), gone.id(), T0);
        var keptSnapshot = new VolumeSnapshot(VolumeSnapshotId.random(), kept.id(), T0);
        catalog().insertVolumeSnapshot(goneSnapshot);
        catalog().insertVolumeSnapshot(keptSnapshot);
        var goneSync = sync(gone, T0, Optional.empty());
        var keptSync = sync(kept, T0, Optional.empty());
        catalog().insertVolumeSync(goneSync);
        catalog().insertVolumeSync(keptSync);
        var sandbox = CatalogFixtures.running(T0);
        catalog().insert(sandbox);
        var keptMount = new VolumeMount(kept.id(), "/data/kept", false);
        catalog().setMounts(sandbox.id(), List.of(new VolumeMount(gone.id(), "/data/gone", true), keptMount));
        var goneToken = CatalogFixtures.token(TenantId.DEFAULT, new TokenScope.Volume(gone.id().value()), T0, T0.plusSeconds(60));
        var keptToken = CatalogFixtures.token(TenantId.DEFAULT, new TokenScope.Volume(kept.id().value()), T0, T0.plusSeconds(60));
        // A sandbox that happens to carry the volume's id is another resource.
        var sandboxToken = CatalogFixtures.token(TenantId.DEFAULT, new TokenScope.Sandbox(new SandboxId("sbx_" + gone.id().value().substring(4))),
                T0, T0.plusSeconds(60));
        List.of(goneToken, keptToken, sandboxToken).forEach(catalog()::insertToken);

        catalog().deleteVolume(gone.id());
        catalog().deleteVolume(gone.id());
        catalog().deleteVolume(VolumeId.random());

        assertThat(catalog().findVolume(gone.id())).isEmpty();
        assertThat(catalog().findVolumeByName(TenantId.DEFAULT, "gone")).isEmpty();
        assertThat(catalog().allVolumes()).containsExactly(kept);
        assertThat(catalog().findVolumeSnapshot(goneSnapshot.id())).isEmpty();
        assertThat(catalog().volumeSnapshotsOf(kept.id())).containsExactly(keptSnapshot);
        assertThat(catalog().findVolumeSync(goneSync.id())).isEmpty();
        assertThat(catalog().volumeSyncsOf(kept.id())).containsExactly(keptSync);
        assertThat(catalog().mountsOf(sandbox.id())).containsExactly(keptMount);
        assertThat(catalog().mountersOf(gone.id())).isEmpty();
        assertThat(catalog().findToken(goneToken.id())).isEmpty();
        assertThat(catalog().tokensOf(TenantId.DEFAULT)).containsExactlyInAnyOrder(keptToken, sandboxToken);
        catalog().insertVolume(CatalogFixtures.volume(TenantId.DEFAULT, "gone", T0)); // the name is free again
    }

    @Test
    void setMountsReplacesTheSandboxsMountsInOrderAndDeleteForgetsThem() {
        var sandbox = CatalogFixtures.running(T0);
        var other = CatalogFixtures.running(T0);
        catalog().insert(sandbox);
        catalog().insert(other);
        var v1 = VolumeId.random();
        var v2 = VolumeId.random();
        assertThat(catalog().mountsOf(sandbox.id())).isEmpty();

        var first = List.of(new VolumeMount(v2, "/z", false), new VolumeMount(v1, "/a", true), new VolumeMount(v2, "/m", true));
        catalog().setMounts(sandbox.id(), first);
        var others = List.of(new VolumeMount(v1, "/data", false));
        catalog().setMounts(other.id(), others);
        assertThat(catalog().mountsOf(sandbox.id())).containsExactlyElementsOf(first);

        var second = List.of(new VolumeMount(v1, "/b", false));
        catalog().setMounts(sandbox.id(), second);
        assertThat(catalog().mountsOf(sandbox.id())).containsExactlyElementsOf(second);
        catalog().setMounts(sandbox.id(), List.of());
        assertThat(catalog().mountsOf(sandbox.id())).isEmpty();

        catalog().setMounts(sandbox.id(), second);
        catalog().delete(sandbox.id());
        assertThat(catalog().mountsOf(sandbox.id())).isEmpty();
        assertThat(catalog().mountsOf(other.id())).containsExactlyElementsOf(others);
    }

    @Test
    void mountersAreTheLiveSandboxesMountingAVolumeOldestFirstThenByPosition() {
        var volume = VolumeId.random();
        var late = CatalogFixtures.withId(CatalogFixtures.running(T0.plusSeconds(2)), new SandboxId("sbx_0000000000000000"));
        var tieB = CatalogFixtures.withId(CatalogFixtures.running(T0.plusSeconds(1)), new SandboxId("sbx_bbbbbbbbbbbbbbbb"));
        var tieA = CatalogFixtures.withId(CatalogFixtures.running(T0.plusSeconds(1)), new SandboxId("sbx_aaaaaaaaaaaaaaaa"));
        var stopped = CatalogFixtures.running(T0.plusSeconds(3)).withState(new SandboxState.Stopped("idle"));
        var dying = CatalogFixtures.running(T0).withState(SandboxState.DELETED);
        var ofAnother = CatalogFixtures.running(T0);
        List.of(late, tieB, tieA, stopped, dying, ofAnother).forEach(catalog()::insert);
        catalog().setMounts(late.id(), List.of(new VolumeMount(volume, "/late", false)));
        catalog().setMounts(tieB.id(), List.of(new VolumeMount(VolumeId.random(), "/x", false), new VolumeMount(volume, "/b2", true),
                new VolumeMount(volume, "/b1", false)));
        catalog().setMounts(tieA.id(), List.of(new VolumeMount(volume, "/a", true)));
        catalog().setMounts(stopped.id(), List.of(new VolumeMount(volume, "/stopped", true)));
        catalog().setMounts(dying.id(), List.of(new VolumeMount(volume, "/dying", false)));
        catalog().setMounts(ofAnother.id(), List.of(new VolumeMount(VolumeId.random(), "/other", false)));
        catalog().setMounts(SandboxId.random(), List.of(new VolumeMount(volume, "/no-record", false))); // no sandbox record: no mounter

        assertThat(catalog().mountersOf(volume)).containsExactly(
                new Mounter(tieA.id(), "/a", true),
                new Mounter(tieB.id(), "/b2", true),
                new Mounter(tieB.id(), "/b1", false),
                new Mounter(late.id(), "/late", false),
                new Mounter(stopped.id(), "/stopped", true));
        assertThat(catalog().mountersOf(VolumeId.random())).isEmpty();
    }

    @Test
    void snapshotsRoundTripListOldestFirstAndDeleteIdempotently() {
        var volume = VolumeId.random();
        var late = new VolumeSnapshot(VolumeSnapshotId.random(), volume, T0.plusSeconds(2));
        var early = new VolumeSnapshot(VolumeSnapshotId.random(), volume, T0);
        var tieA = new VolumeSnapshot(new VolumeSnapshotId("vsnap_aaaaaaaaaaaaaaaa"), volume, T0.plusSeconds(1));
        var tieB = new VolumeSnapshot(new VolumeSnapshotId("vsnap_bbbbbbbbbbbbbbbb"), volume, T0.plusSeconds(1));
        var ofOther = new VolumeSnapshot(VolumeSnapshotId.random(), VolumeId.random(), T0);
        List.of(late, tieB, early, ofOther, tieA).forEach(catalog()::insertVolumeSnapshot);

        assertThat(catalog().findVolumeSnapshot(late.id())).contains(late);
        assertThat(catalog().findVolumeSnapshot(VolumeSnapshotId.random())).isEmpty();
        assertThat(catalog().volumeSnapshotsOf(volume)).containsExactly(early, tieA, tieB, late);
        assertThat(catalog().volumeSnapshotsOf(VolumeId.random())).isEmpty();
        assertThatThrownBy(() -> catalog().insertVolumeSnapshot(new VolumeSnapshot(late.id(), volume, T0)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));

        catalog().deleteVolumeSnapshot(tieA.id());
        catalog().deleteVolumeSnapshot(tieA.id());
        catalog().deleteVolumeSnapshot(VolumeSnapshotId.random());
        assertThat(catalog().volumeSnapshotsOf(volume)).containsExactly(early, tieB, late);
        assertThat(catalog().volumeSnapshotsOf(ofOther.volume())).containsExactly(ofOther);
    }

    @Test
    void syncsRoundTripListOldestFirstAndDeleteIdempotently() {
        var volume = CatalogFixtures.volume(TenantId.DEFAULT, "data", T0);
        var first = sync(volume, T0, Optional.empty());
        var second = new VolumeSync(VolumeSyncId.random(), volume.id(), "data ✓", 1L << 40,
                List.of("a".repeat(64), "b".repeat(64)), Optional.of(first.id()), "vsnap_0123456789abcdef", 5_000_000_000L, T0.plusSeconds(1));
        var tieA = new VolumeSync(new VolumeSyncId("vsync_aaaaaaaaaaaaaaaa"), volume.id(), "data", 64, List.of(), Optional.empty(), "s", 0,
                T0.plusSeconds(2));
        var tieB = new VolumeSync(new VolumeSyncId("vsync_bbbbbbbbbbbbbbbb"), volume.id(), "data", 64, List.of("c".repeat(64)),
                Optional.empty(), "s", 0, T0.plusSeconds(2));
        var ofOther = sync(CatalogFixtures.volume(TenantId.DEFAULT, "other", T0), T0, Optional.empty());
        List.of(tieB, second, ofOther, first, tieA).forEach(catalog()::insertVolumeSync);

        assertThat(catalog().findVolumeSync(second.id())).contains(second);
        assertThat(catalog().findVolumeSync(tieA.id())).contains(tieA);
        assertThat(catalog().findVolumeSync(VolumeSyncId.random())).isEmpty();
        assertThat(catalog().volumeSyncsOf(volume.id())).containsExactly(first, second, tieA, tieB);
        assertThat(catalog().volumeSyncsOf(VolumeId.random())).isEmpty();
        assertThatThrownBy(() -> catalog().insertVolumeSync(sync(volume, T0, Optional.empty(), second.id())))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));

        catalog().deleteVolumeSync(first.id());
        catalog().deleteVolumeSync(first.id());
        catalog().deleteVolumeSync(VolumeSyncId.random());
        assertThat(catalog().volumeSyncsOf(volume.id())).containsExactly(second, tieA, tieB);
        assertThat(catalog().volumeSyncsOf(ofOther.volume())).containsExactly(ofOther);
    }

    @Test
    void aTenantsVolumesCountTowardItsDisk() {
        var a = TenantId.random();
        catalog().insertVolume(new Volume(VolumeId.random(), a, "one", 300, T0, Optional.empty()));
        assertThat(catalog().usage(a)).as("volumes alone").isEqualTo(new TenantUsage(0, 0, 300));

        catalog().insertVolume(new Volume(VolumeId.random(), a, "two", 20, T0, Optional.empty()));
        catalog().insertVolume(new Volume(VolumeId.random(), TenantId.random(), "elsewhere", 5000, T0, Optional.empty()));
        catalog().insert(CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 512, 100, T0));
        assertThat(catalog().usage(a)).isEqualTo(new TenantUsage(1, 512, 420));
    }

    @Test
    void aTenantWithAVolumeIsNotEmptyAndKeepsEverythingUntilTheVolumeGoes() {
        var doomed = insertTenant("doomed").id();
        var volume = CatalogFixtures.volume(doomed, "data", T0);
        catalog().insertVolume(volume);
        var key = CatalogFixtures.key(doomed, T0);
        catalog().insertApiKey(key);

        assertThat(catalog().deleteTenantIfEmpty(doomed)).as("a volume is something the tenant holds").isFalse();
        assertThat(catalog().findTenant(doomed)).isPresent();
        assertThat(catalog().volumesOf(doomed)).containsExactly(volume);
        assertThat(catalog().apiKeysOf(doomed)).containsExactly(key);

        catalog().deleteVolume(volume.id());
        assertThat(catalog().deleteTenantIfEmpty(doomed)).isTrue();
        assertThat(catalog().findTenant(doomed)).isEmpty();
        assertThat(catalog().apiKeysOf(doomed)).isEmpty();
    }

    private static VolumeSync sync(Volume volume, Instant at, Optional<VolumeSyncId> parent) {
        return sync(volume, at, parent, VolumeSyncId.random());
    }

    private static VolumeSync sync(Volume volume, Instant at, Optional<VolumeSyncId> parent, VolumeSyncId id) {
        return new VolumeSync(id, volume.id(), volume.name(), volume.sizeMb(), List.of("f".repeat(64)), parent,
                "vsnap_" + id.value().substring("vsync_".length()), 4096, at);
    }
}
