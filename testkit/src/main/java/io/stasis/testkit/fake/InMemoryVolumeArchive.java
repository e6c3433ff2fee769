package io.stasis.testkit.fake;

import io.stasis.core.blob.ManifestId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.VolumeArchive;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link VolumeArchive} in memory: streams by the SHA-256 of their bytes, records by key.
 * Passes {@link io.stasis.testkit.VolumeArchiveSuite}.
 */
public final class InMemoryVolumeArchive implements VolumeArchive {
    private final Map<String, byte[]> streams = new ConcurrentHashMap<>();
    private final Map<String, byte[]> records = new ConcurrentHashMap<>();

    @Override
    public Stored putStream(Path file) {
        try {
            byte[] bytes = Files.readAllBytes(file);
            String id = ManifestId.of(bytes).hex(); // the SHA-256 of the bytes, as the real archive's ids are hex
            boolean added = streams.putIfAbsent(id, bytes) == null;
            return new Stored(id, bytes.length, added ? bytes.length : 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void getStream(String id, Path file) {
        byte[] bytes = streams.get(id);
        if (bytes == null) throw new StasisException(ErrorCode.NOT_FOUND, "no stored stream " + id, Map.of());
        try {
            Files.write(file, bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void putRecord(String key, byte[] content) {
        records.put(key, content.clone());
    }

    @Override
    public Optional<byte[]> getRecord(String key) {
        return Optional.ofNullable(records.get(key)).map(byte[]::clone);
    }

    @Override
    public void deleteRecord(String key) {
        records.remove(key);
    }
}
