package io.stasis.core.spi;

import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeSnapshotId;
import io.stasis.core.volume.VolumeSyncId;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Volumes on the host: one writable directory tree per volume with a limit on the bytes it holds,
 * read-only snapshots of them (O(1)), and the send/receive streams that carry a volume's content to
 * the blob store and back. Failures are {@code runtime_failed} naming the step; nothing half-made
 * stays behind.
 */
public interface VolumeStore {

    /**
     * Creates an empty volume whose top directory belongs to {@code owner} (the sandbox's root).
     * <p>Effects on success: the volume may hold at most {@code sizeBytes}; writes past it fail with
     * {@code EDQUOT}. Returns its host path.
     */
    Path create(VolumeId id, long sizeBytes, FileOwner owner);

    /** Creates a writable volume holding what a snapshot holds, limited to {@code sizeBytes}. */
    Path createFrom(VolumeId id, VolumeSnapshotId snapshot, long sizeBytes);

    /** The host path of a volume (what sandboxes bind-mount), if it exists. */
    Optional<Path> path(VolumeId id);

    /** Deletes a volume and everything in it. Idempotent. Its snapshots stay. */
    void delete(VolumeId id);

    /** Every volume here (for reconciliation). */
    Set<VolumeId> list();

    /** Every volume snapshot here (for reconciliation). */
    Set<VolumeSnapshotId> snapshots();

    /** Every sync snapshot here (for reconciliation). */
    Set<VolumeSyncId> syncSnapshots();

    /** A read-only snapshot of the volume: every write completed before the call is in it. */
    void snapshot(VolumeId id, VolumeSnapshotId snapshot);

    /** Idempotent. Volumes branched from it are not affected. */
    void deleteSnapshot(VolumeSnapshotId snapshot);

    /** A read-only snapshot kept as the base of a sync, and of the next sync's incremental stream. */
    void snapshotForSync(VolumeId id, VolumeSyncId sync);

    boolean hasSyncSnapshot(VolumeSyncId sync);

    /** Idempotent. */
    void deleteSyncSnapshot(VolumeSyncId sync);

    /**
     * Writes the send stream of a sync snapshot to {@code streamFile}: everything, or only what
     * differs from {@code parent}'s sync snapshot.
     */
    void send(VolumeSyncId sync, Optional<VolumeSyncId> parent, Path streamFile);

    /**
     * Creates volume {@code id} from a chain of send streams (a full one, then incrementals, in
     * order), limited to {@code sizeBytes}. Temporary received subvolumes are removed.
     */
    Path receive(VolumeId id, List<Path> streamFiles, long sizeBytes);

    /** A directory on the same host for temporary stream files. */
    Path scratchDir();

    /** Deletes a temporary stream file of {@link #scratchDir}, if it is there; a failure is logged, not thrown. */
    void deleteScratch(Path file);
}
