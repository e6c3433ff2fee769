package io.stasis.core.volume;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.VolumeArchive;
import io.stasis.core.spi.VolumeCatalog;
import io.stasis.core.spi.VolumeStore;
import io.stasis.core.tenant.TenantId;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A volume's syncs to the durable store and its restores from them: the streams of its
 * snapshots, the records that name them ({@link VolumeSyncRecord}), and the pointer to each
 * volume's newest sync. The caller ({@link VolumeService}) holds the volume's lock.
 */
final class VolumeSyncs {
    private static final Logger log = LoggerFactory.getLogger(VolumeSyncs.class);
    /** Where sync records are, under the archive's records: {@code volume-syncs/<vsync>}. */
    static final String SYNC_RECORDS = "volume-syncs/";
    private static final String LATEST_RECORDS = "volume-latest/";

    private final VolumeCatalog catalog;
    private final VolumeStore store;
    private final VolumeArchive archive;
    private final Clock clock;

    VolumeSyncs(VolumeCatalog catalog, VolumeStore store, VolumeArchive archive, Clock clock) {
        this.catalog = catalog;
        this.store = store;
        this.archive = archive;
        this.clock = clock;
    }

    /** A snapshot for the sync, its stream (incremental to the previous sync's snapshot where that is still here), its record. */
    VolumeSync sync(Volume volume) {
        long start = System.nanoTime();
        var previous = catalog.volumeSyncsOf(volume.id()).stream().filter(s -> store.hasSyncSnapshot(s.id())).reduce((a, b) -> b);
        var id = VolumeSyncId.random();
        Path file = store.scratchDir().resolve(id.value() + ".stream");
        store.snapshotForSync(volume.id(), id);
        try (var upload = archive.beginUpload()) {
            store.send(id, previous.map(VolumeSync::id), file);
            var stored = upload.putStream(file);
            var streams = new ArrayList<String>(previous.map(VolumeSync::streams).orElse(List.of()));
            streams.add(stored.id());
            var sync = new VolumeSync(id, volume.id(), volume.name(), volume.sizeMb(), streams, previous.map(VolumeSync::id),
                    id.value(), stored.bytes(), clock.instant());
            upload.putRecord(SYNC_RECORDS + id.value(), VolumeSyncRecord.encode(sync));
            upload.putRecord(LATEST_RECORDS + volume.id().value(), id.value().getBytes(StandardCharsets.US_ASCII));
            catalog.insertVolumeSync(sync);
            // Only the newest sync snapshot is kept: it is the next sync's parent.
            previous.ifPresent(p -> store.deleteSyncSnapshot(p.id()));
            log.atInfo().addKeyValue("volume", volume.id()).addKeyValue("sync", id).addKeyValue("incremental", previous.isPresent())
                    .addKeyValue("streamBytes", stored.bytes()).addKeyValue("newBytes", stored.newBytes())
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("volume synced");
            return sync;
        } catch (RuntimeException e) {
            try {
                store.deleteSyncSnapshot(id);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        } finally {
            store.deleteScratch(file);
        }
    }

    /**
     * Deletes one of the volume's syncs from the blob store, so that what only it holds can be
     * collected. Later syncs stay restorable: each names every stream of its chain. If it was the
     * newest, the volume's newest sync becomes the one before it (what {@code fromSync: <volume id>}
     * restores), and the next sync is a full one (its base snapshot goes too).
     * <p>Order, for a crash in between: the record goes first (no instance can restore it any
     * more), then the newest-sync pointer, then the catalog's row; deleting again finishes it.
     */
    void delete(Volume volume, String syncRef) {
        var syncs = catalog.volumeSyncsOf(volume.id());
        var sync = syncs.stream().filter(s -> s.id().value().equals(syncRef)).findFirst().orElseThrow(() -> notFound(syncRef));
        archive.deleteRecord(SYNC_RECORDS + sync.id().value());
        var rest = syncs.stream().filter(s -> !s.id().equals(sync.id())).toList();
        String latestKey = LATEST_RECORDS + volume.id().value();
        boolean wasLatest = newestSyncOf(volume.id().value()).filter(sync.id().value()::equals).isPresent();
        if (wasLatest && rest.isEmpty()) archive.deleteRecord(latestKey);
        else if (wasLatest) archive.putRecord(latestKey, rest.getLast().id().value().getBytes(StandardCharsets.US_ASCII));
        catalog.deleteVolumeSync(sync.id());
        store.deleteSyncSnapshot(sync.id());
        log.atInfo().addKeyValue("volume", volume.id()).addKeyValue("sync", sync.id()).addKeyValue("wasNewest", wasLatest).log("volume sync deleted");
    }

    /**
     * A sync as the archive has it, by sync id or by volume id (its newest sync). Syncs carry no
     * tenant in the archive: any instance sharing the blob store can restore them, and the sync's
     * random id is what grants that.
     */
    VolumeSync archived(String ref) {
        String syncId = ref;
        if (VolumeId.isValid(ref)) {
            syncId = newestSyncOf(ref).orElseThrow(() -> notFound(ref));
        }
        if (!VolumeSyncId.isValid(syncId)) throw notFound(ref);
        return VolumeSyncRecord.decode(archive.getRecord(SYNC_RECORDS + syncId).orElseThrow(() -> notFound(ref)));
    }

    /** The id the archive's newest-sync pointer of a volume holds, if it has one. */
    private Optional<String> newestSyncOf(String volumeId) {
        return archive.getRecord(LATEST_RECORDS + volumeId).map(b -> new String(b, StandardCharsets.US_ASCII).strip());
    }

    /** A new volume {@code id} on this host from the sync {@code ref} names: its chain of streams, received in order. */
    Volume restore(VolumeId id, TenantId tenant, String name, long sizeMb, String ref) {
        var sync = archived(ref);
        var files = new ArrayList<Path>();
        try {
            for (int i = 0; i < sync.streams().size(); i++) {
                Path file = store.scratchDir().resolve(id.value() + "-" + i + ".stream");
                files.add(file);
                archive.getStream(sync.streams().get(i), file);
            }
            store.receive(id, files, sizeMb << 20);
        } finally {
            files.forEach(store::deleteScratch);
        }
        return new Volume(id, tenant, name, sizeMb, clock.instant(), Optional.of(sync.id().value()));
    }

    static StasisException notFound(String ref) {
        return new StasisException(ErrorCode.VOLUME_SYNC_NOT_FOUND, "no volume sync for '" + ref + "' in the blob store", Map.of("sync", ref));
    }
}
