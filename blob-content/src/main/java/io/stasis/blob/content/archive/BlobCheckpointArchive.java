package io.stasis.blob.content.archive;

import io.stasis.blob.content.ContentStore;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.checkpoint.CheckpointDescriptor;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BlobInfo;
import io.stasis.core.spi.BlobStore;
import io.stasis.core.spi.CheckpointArchive;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link CheckpointArchive} on a {@link ContentStore} (the streams: chunked, deduplicated,
 * verified) and its {@link BlobStore} (the descriptors: one JSON object per durable checkpoint at
 * {@code checkpoints/<id>.json}, written with the store's atomic put).
 */
public final class BlobCheckpointArchive implements CheckpointArchive {
    private static final Logger log = LoggerFactory.getLogger(BlobCheckpointArchive.class);
    private final ContentStore content;
    private final BlobStore blobs;

    public BlobCheckpointArchive(ContentStore content, BlobStore blobs) {
        this.content = content;
        this.blobs = blobs;
    }

    @Override
    public Upload beginUpload() {
        var session = content.session();
        return new Upload() {
            @Override
            public Stored put(InputStream stream) {
                var result = session.put(stream);
                return new Stored(result.manifest(), result.logicalBytes(), result.storedBytes());
            }

            @Override
            public void keep(ManifestId id) {
                session.keep(id);
            }

            @Override
            public String putDescriptor(CheckpointDescriptor descriptor) {
                session.ensureHeld("write descriptor " + descriptor.checkpoint());
                byte[] encoded = DescriptorJson.encode(descriptor);
                blobs.put(CheckpointDescriptor.key(descriptor.checkpoint()), encoded);
                try {
                    return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(encoded));
                } catch (NoSuchAlgorithmException e) {
                    throw new IllegalStateException("every JDK has SHA-256", e);
                }
            }

            @Override
            public void close() {
                session.close();
            }
        };
    }

    @Override
    public InputStream open(ManifestId id) {
        return content.open(id);
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
    public List<CheckpointDescriptor> descriptors() {
        var out = new ArrayList<CheckpointDescriptor>();
        for (var id : descriptorIds()) {
            try {
                descriptor(id).ifPresent(out::add);
            } catch (StasisException e) {
                log.atWarn().addKeyValue("checkpoint", id).setCause(e).log("unreadable checkpoint descriptor skipped");
            }
        }
        return out;
    }

    /**
     * Every stream a descriptor in the store names (each root layer of its chain and its image),
     * for the garbage collection's live set. Strict, unlike {@link #descriptors()}: a descriptor
     * that cannot be read fails the whole call, since its streams would otherwise be collected.
     */
    public Set<ManifestId> liveStreams() {
        var live = new HashSet<ManifestId>();
        for (var id : descriptorIds()) {
            descriptor(id).ifPresent(d -> {
                d.roots().forEach(layer -> live.add(layer.stream()));
                d.image().ifPresent(live::add);
            });
        }
        return live;
    }

    /** The ids of the descriptors in the store; other keys under {@code checkpoints/} are not ours. */
    private List<CheckpointId> descriptorIds() {
        var ids = new ArrayList<CheckpointId>();
        try (var keys = blobs.listAll("checkpoints/")) {
            for (var info : (Iterable<BlobInfo>) keys::iterator) {
                String name = info.key().substring("checkpoints/".length());
                if (!name.endsWith(".json")) continue;
                String id = name.substring(0, name.length() - ".json".length());
                if (CheckpointId.isValid(id)) ids.add(new CheckpointId(id));
            }
        }
        return ids;
    }

    @Override
    public void deleteDescriptor(CheckpointId id) {
        blobs.delete(CheckpointDescriptor.key(id));
    }
}
