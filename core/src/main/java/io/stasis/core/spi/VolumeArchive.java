package io.stasis.core.spi;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.nio.file.Path;
import java.util.Map;
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

    /** Deletes a record; idempotent. What only it named becomes garbage for the store's collector. */
    void deleteRecord(String key);

    /**
     * Begins one sync's upload: its stream, then the records that name it. Until it closes, no
     * garbage collection of the store removes the stream, though no record names it yet.
     */
    default Upload beginUpload() {
        return new Upload() {
            @Override
            public Stored putStream(Path file) {
                return VolumeArchive.this.putStream(file);
            }

            @Override
            public void putRecord(String key, byte[] content) {
                VolumeArchive.this.putRecord(key, content);
            }

            @Override
            public void close() {
            }
        };
    }

    /** One sync's upload, from {@link #beginUpload} to {@link #close}. */
    interface Upload extends AutoCloseable {
        Stored putStream(Path file);

        /** Writes a record; {@code runtime_failed} (nothing written) if the upload's hold on the store lapsed. */
        void putRecord(String key, byte[] content);

        @Override
        void close();
    }

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

        @Override
        public void deleteRecord(String key) {
            throw unavailable();
        }

        private StasisException unavailable() {
            return new StasisException(ErrorCode.INVALID_STATE,
                    "this server has no blob store for volume syncs", Map.of());
        }
    };
}
