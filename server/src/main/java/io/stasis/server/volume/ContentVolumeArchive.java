package io.stasis.server.volume;

import io.stasis.blob.content.ContentStore;
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
import java.util.Optional;

/**
 * Volume syncs on a {@link BlobStore}: streams through a {@link ContentStore} (chunked,
 * deduplicated, verified), records as plain objects under {@code volumes/}.
 */
public final class ContentVolumeArchive implements VolumeArchive {
    private static final String PREFIX = "volumes/";
    private final BlobStore blobs;
    private final ContentStore content;

    public ContentVolumeArchive(BlobStore blobs) {
        this.blobs = blobs;
        this.content = new ContentStore(blobs);
    }

    @Override
    public Stored putStream(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            var result = content.put(in);
            return new Stored(result.manifest().hex(), result.logicalBytes(), result.newLogicalBytes());
        } catch (IOException e) {
            throw StasisException.runtimeFailed(null, "store volume stream", e.toString(), e);
        }
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
