package io.stasis.blob.content.archive;

import io.stasis.blob.content.ContentStore;
import io.stasis.blob.content.UploadSession;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BlobStore;
import io.stasis.core.spi.VolumeArchive;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.spi.BlobInfo;
import io.stasis.core.volume.VolumeService;

/**
 * Volume syncs on a {@link BlobStore}: streams through a {@link ContentStore} (chunked,
 * deduplicated, verified), records as plain objects under {@code volumes/}.
 */
public final class ContentVolumeArchive implements VolumeArchive {
    private static final String PREFIX = "volumes/";
    private final BlobStore blobs;
    private final ContentStore content;

    /** @param content the process's one content store on {@code blobs} (its pins keep uploads and the GC apart) */
    public ContentVolumeArchive(BlobStore blobs, ContentStore content) {
        this.blobs = blobs;
        this.content = content;
    }

    @Override
    public Stored putStream(Path file) {
        try (var session = content.session()) {
            return putStream(session, file);
        }
    }

    private static Stored putStream(UploadSession session, Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            var result = session.put(in);
            return new Stored(result.manifest().hex(), result.logicalBytes(), result.newLogicalBytes());
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "store volume stream", e.toString(), e);
        }
    }

    /** The stream and its records in one {@link UploadSession}: the stream is safe from collection until its record names it. */
    @Override
    public Upload beginUpload() {
        var session = content.session();
        return new Upload() {
            @Override
            public Stored putStream(Path file) {
                return ContentVolumeArchive.putStream(session, file);
            }

            @Override
            public void putRecord(String key, byte[] bytes) {
                session.ensureHeld("write volume record " + key);
                ContentVolumeArchive.this.putRecord(key, bytes);
            }

            @Override
            public void close() {
                session.close();
            }
        };
    }

    @Override
    public void getStream(String id, Path file) {
        try (InputStream in = content.open(ManifestId.parse(id))) {
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "fetch volume stream " + id, e.toString(), e);
        }
    }

    @Override
    public void putRecord(String key, byte[] bytes) {
        blobs.put(PREFIX + key, bytes);
    }

    /**
     * Every stream a sync record in the store names (a sync's whole chain), for the garbage
     * collection's live set. A record that cannot be read or parsed fails the whole call.
     */
    public Set<ManifestId> liveStreams() {
        var live = new HashSet<ManifestId>();
        List<String> keys;
        try (var listing = blobs.listAll(PREFIX + VolumeService.SYNC_RECORDS)) {
            keys = listing.map(BlobInfo::key).toList();
        }
        for (String key : keys) {
            byte[] record = getRecord(key.substring(PREFIX.length())).orElse(null);
            if (record == null) continue; // removed since the listing
            try {
                for (String stream : VolumeService.syncStreams(record)) live.add(ManifestId.parse(stream));
            } catch (RuntimeException e) {
                throw new StasisException(ErrorCode.INTERNAL, "the volume sync record " + key + " is unreadable: " + e.getMessage(),
                        Map.of("key", key), e);
            }
        }
        return live;
    }

    @Override
    public void deleteRecord(String key) {
        blobs.delete(PREFIX + key);
    }

    @Override
    public Optional<byte[]> getRecord(String key) {
        var in = blobs.get(PREFIX + key);
        if (in.isEmpty()) return Optional.empty();
        try (InputStream stream = in.get()) {
            return Optional.of(stream.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
