package io.stasis.core.spi;

import java.nio.file.Path;
import java.util.Optional;

/**
 * Where volume syncs go: the durable (content-addressed) store shared by instances. Streams are
 * stored deduplicated and verified; records are small named objects.
 */
public interface VolumeArchive {
    /** Stores the file's bytes; returns the id to read them back by, once they are durable. */
    Stored putStream(Path file);

    /** What {@link #putStream} stored: the stream's id, its size, and the bytes that were new to the store. */
    record Stored(String id, long bytes, long newBytes) {
    }

    /** Writes a stored stream into {@code file}, checked against its id. */
    void getStream(String id, Path file);

    /** Writes a small record atomically under {@code key} (segments of {@code [A-Za-z0-9._-]} joined by '/'). */
    void putRecord(String key, byte[] content);

    Optional<byte[]> getRecord(String key);

    /** No archive configured: syncs are refused. */
    VolumeArchive NONE = new VolumeArchive() {
        @Override
        public Stored putStream(Path file) {
            throw unavailable();
        }

        @Override
        public void getStream(String id, Path file) {
            throw unavailable();
        }

        @Override
        public void putRecord(String key, byte[] content) {
            throw unavailable();
        }

        @Override
        public Optional<byte[]> getRecord(String key) {
            throw unavailable();
        }

        private io.stasis.core.error.StasisException unavailable() {
            return new io.stasis.core.error.StasisException(io.stasis.core.error.ErrorCode.INVALID_STATE,
                    "this server has no blob store for volume syncs", java.util.Map.of());
        }
    };
}
