package io.stasis.server.durable;

import io.stasis.blob.content.ContentStore;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.checkpoint.CheckpointDescriptor;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BlobStore;
import io.stasis.core.spi.CheckpointArchive;
import io.stasis.server.http.DescriptorJson;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Optional;

/**
 * {@link CheckpointArchive} on a {@link ContentStore} (the streams: chunked, deduplicated,
 * verified) and its {@link BlobStore} (the descriptors: one JSON object per durable checkpoint at
 * {@code checkpoints/<id>.json}, written with the store's atomic put).
 */
public final class BlobCheckpointArchive implements CheckpointArchive {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(BlobCheckpointArchive.class);
    private final ContentStore content;
    private final BlobStore blobs;

    public BlobCheckpointArchive(ContentStore content, BlobStore blobs) {
        this.content = content;
        this.blobs = blobs;
    }

    @Override
    public Stored put(InputStream stream) {
        var result = content.put(stream);
        return new Stored(result.manifest(), result.logicalBytes(), result.storedBytes());
    }

    @Override
    public InputStream open(ManifestId id) {
        return content.open(id);
    }

    @Override
    public void putDescriptor(CheckpointDescriptor descriptor) {
        blobs.put(CheckpointDescriptor.key(descriptor.checkpoint()), DescriptorJson.encode(descriptor));
    }

    @Override
    public Optional<CheckpointDescriptor> descriptor(CheckpointId id) {
        var stream = blobs.get(CheckpointDescriptor.key(id));
        if (stream.isEmpty()) return Optional.empty();
        try (var in = stream.get()) {
            return Optional.of(DescriptorJson.decode(in.readAllBytes()));
        } catch (IOException | RuntimeException e) {
            throw new StasisException(ErrorCode.INTERNAL, "the descriptor of durable checkpoint " + id + " is unreadable: " + e.getMessage(),
                    Map.of("checkpoint", id.value()), e);
        }
    }

    @Override
    public java.util.List<CheckpointDescriptor> descriptors() {
        var out = new java.util.ArrayList<CheckpointDescriptor>();
        try (var keys = blobs.listAll("checkpoints/")) {
            for (var info : (Iterable<io.stasis.core.spi.BlobInfo>) keys::iterator) {
                String name = info.key().substring("checkpoints/".length());
                if (!name.endsWith(".json")) continue;
                String id = name.substring(0, name.length() - ".json".length());
                if (!CheckpointId.isValid(id)) continue;
                try {
                    descriptor(new CheckpointId(id)).ifPresent(out::add);
                } catch (StasisException e) {
                    log.atWarn().addKeyValue("checkpoint", id).setCause(e).log("unreadable checkpoint descriptor skipped");
                }
            }
        }
        return out;
    }

    @Override
    public void deleteDescriptor(CheckpointId id) {
        blobs.delete(CheckpointDescriptor.key(id));
    }
}
