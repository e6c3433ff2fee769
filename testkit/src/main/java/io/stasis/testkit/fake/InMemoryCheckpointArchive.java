package io.stasis.testkit.fake;

import io.stasis.core.blob.ManifestId;
import io.stasis.core.checkpoint.CheckpointDescriptor;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.CheckpointArchive;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A {@link CheckpointArchive} in memory: streams by the SHA-256 of their bytes (so the same content
 * has the same id and is stored once), descriptors as the records themselves. Passes
 * {@link io.stasis.testkit.CheckpointArchiveSuite}.
 */
public final class InMemoryCheckpointArchive implements CheckpointArchive {
    private final Map<ManifestId, byte[]> streams = new ConcurrentHashMap<>();
    private final Map<CheckpointId, CheckpointDescriptor> descriptors = new ConcurrentSkipListMap<>(
            (a, b) -> a.value().compareTo(b.value()));

    private static StasisException notFound(ManifestId id) {
        return new StasisException(ErrorCode.NOT_FOUND, "no stored stream with manifest " + id, Map.of("manifest", id.hex()));
    }

    @Override
    public Upload beginUpload() {
        return new Upload() {
            @Override
            public Stored put(InputStream content) {
                byte[] bytes;
                try {
                    bytes = content.readAllBytes();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                var id = ManifestId.of(bytes); // the SHA-256 of the bytes: a content address, as the real store's
                boolean added = streams.putIfAbsent(id, bytes) == null;
                return new Stored(id, bytes.length, added ? bytes.length : 0);
            }

            @Override
            public void keep(ManifestId id) {
                if (!streams.containsKey(id)) throw notFound(id);
            }

            @Override
            public String putDescriptor(CheckpointDescriptor descriptor) {
                descriptors.put(descriptor.checkpoint(), descriptor);
                return "sha256:" + ManifestId.of(descriptor.toString().getBytes(StandardCharsets.UTF_8)).hex();
            }

            @Override
            public void close() {
            }
        };
    }

    @Override
    public InputStream open(ManifestId id) {
        byte[] bytes = streams.get(id);
        if (bytes == null) throw notFound(id);
        return new ByteArrayInputStream(bytes);
    }

    @Override
    public Optional<CheckpointDescriptor> descriptor(CheckpointId id) {
        return Optional.ofNullable(descriptors.get(id));
    }

    @Override
    public List<CheckpointDescriptor> descriptors() {
        return List.copyOf(descriptors.values());
    }

    @Override
    public void deleteDescriptor(CheckpointId id) {
        descriptors.remove(id);
    }
}
