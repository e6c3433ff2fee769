package io.stasis.core.blob;

/**
 * A chunk's name: the SHA-256 of its uncompressed bytes, as 64 lowercase hex digits. Equal content
 * has equal ids everywhere, which is what lets checkpoints and volumes share chunks; and a reader
 * can check what it got against the id it asked for.
 */
public record ChunkId(String hex) {
    public ChunkId {
        Sha256.check(hex, "chunk id");
    }

    /** The id of {@code length} bytes of {@code data} from {@code offset}. */
    public static ChunkId of(byte[] data, int offset, int length) {
        return new ChunkId(Sha256.hex(data, offset, length));
    }

    public static ChunkId of(byte[] data) {
        return of(data, 0, data.length);
    }

    /** The id whose raw 32-byte digest is {@code digest}. */
    public static ChunkId fromDigest(byte[] digest) {
        return new ChunkId(Sha256.hex(digest));
    }

    /** The raw 32-byte digest. */
    public byte[] digest() {
        return Sha256.bytes(hex);
    }

    /** Whether {@code length} bytes of {@code data} from {@code offset} hash to this id. */
    public boolean matches(byte[] data, int offset, int length) {
        return hex.equals(Sha256.hex(data, offset, length));
    }

    @Override
    public String toString() {
        return hex;
    }
}
