package io.stasis.core.spi;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.volume.Volume;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeMount;
import io.stasis.core.volume.VolumeSnapshot;
import io.stasis.core.volume.VolumeSnapshotId;
import io.stasis.core.volume.VolumeSync;
import io.stasis.core.volume.VolumeSyncId;
import java.util.List;
import java.util.Optional;

/** The catalog's records of volumes, their snapshots and syncs, and which sandbox mounts which. */
public interface VolumeCatalog {
    /** {@code name_taken} if the tenant has a volume of that name. */
    void insertVolume(Volume volume);

    Optional<Volume> findVolume(VolumeId id);

    Optional<Volume> findVolumeByName(TenantId tenant, String name);

    /** The tenant's volumes, oldest first. */
    List<Volume> volumesOf(TenantId tenant);

    /** Every volume of every tenant (for reconciliation). */
    List<Volume> allVolumes();

    /** Removes the volume with its snapshot records, sync records and tokens. */
    void deleteVolume(VolumeId id);

    /** Records the volumes a sandbox mounts, in order (replacing what it had). */
    void setMounts(SandboxId sandbox, List<VolumeMount> mounts);

    List<VolumeMount> mountsOf(SandboxId sandbox);

    /** The sandboxes (not deleted) that mount the volume, with how. */
    List<Mounter> mountersOf(VolumeId volume);

    /** A sandbox mounting a volume. */
    record Mounter(SandboxId sandbox, String path, boolean readOnly) {
    }

    void insertVolumeSnapshot(VolumeSnapshot snapshot);

    Optional<VolumeSnapshot> findVolumeSnapshot(VolumeSnapshotId id);

    List<VolumeSnapshot> volumeSnapshotsOf(VolumeId volume);

    void deleteVolumeSnapshot(VolumeSnapshotId id);

    void insertVolumeSync(VolumeSync sync);

    Optional<VolumeSync> findVolumeSync(VolumeSyncId id);

    /** The volume's syncs, oldest first. */
    List<VolumeSync> volumeSyncsOf(VolumeId volume);

    void deleteVolumeSync(VolumeSyncId id);
}
