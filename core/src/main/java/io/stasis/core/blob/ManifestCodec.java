package io.stasis.core.blob;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;

/**
 * The stored form of a {@link Manifest}. Binary, big-endian, fixed-width, so that one manifest has
 * exactly one encoding and its SHA-256 can be its id:
 * <pre>
 *   magic     4 bytes  "STMF"
 *   version   1 byte   1
 *   reserved  1 byte   0
 *   count     int32    number of chunks (0 for an empty stream)
 *   size      int64    the stream's length, the sum of the chunk sizes (a check)
 *   count x { id 32 bytes (SHA-256), size int32 }
 * </pre>
 * {@link #decode} accepts only what {@link #encode} produces: anything else, a truncation or a
 * flipped bit in the header, is refused with {@link IllegalArgumentException} before any large
 * allocation. Bits flipped inside an id are not detectable here: the manifest's id (its hash) is.
 */
public final class ManifestCodec {
    private static final byte[] MAGIC = {'S', 'T', 'M', 'F'};
    private static final byte VERSION = 1;
    private static final int HEADER = MAGIC.length + 2 + Integer.BYTES + Long.BYTES;
    private static final int ENTRY = Sha256.BYTES + Integer.BYTES;

    private ManifestCodec() {
    }

    public static byte[] encode(Manifest manifest) {
        int count = manifest.chunks().size();
        if (count > (Integer.MAX_VALUE - HEADER) / ENTRY) throw new IllegalArgumentException("manifest has too many chunks: " + count);
        var out = ByteBuffer.allocate(HEADER + count * ENTRY);
        out.put(MAGIC).put(VERSION).put((byte) 0).putInt(count).putLong(manifest.size());
        for (ChunkRef c : manifest.chunks()) out.put(c.id().digest()).putInt(c.size());
        return out.array();
    }

    /** The manifest encoded in {@code bytes}; {@link IllegalArgumentException} saying why if they are not one. */
    public static Manifest decode(byte[] bytes) {
        if (bytes.length < HEADER) throw refused("it has " + bytes.length + " bytes, fewer than the " + HEADER + "-byte header");
        var in = ByteBuffer.wrap(bytes);
        byte[] magic = new byte[MAGIC.length];
        in.get(magic);
        if (!Arrays.equals(magic, MAGIC)) throw refused("it does not start with STMF");
        byte version = in.get();
        if (version != VERSION) throw refused("version " + version + " is not known (this build reads " + VERSION + ")");
        if (in.get() != 0) throw refused("the reserved byte is not 0");
        int count = in.getInt();
        long size = in.getLong();
        if (count < 0 || (long) count * ENTRY != bytes.length - HEADER)
            throw refused("it says " + count + " chunks but has room for " + (bytes.length - HEADER) / (double) ENTRY);
        var chunks = new ArrayList<ChunkRef>(count);
        long sum = 0;
        try {
            for (int i = 0; i < count; i++) {
                byte[] digest = new byte[Sha256.BYTES];
                in.get(digest);
                var ref = new ChunkRef(ChunkId.fromDigest(digest), in.getInt());
                sum += ref.size();
                chunks.add(ref);
            }
        } catch (BufferUnderflowException e) {
            throw refused("it ends inside a chunk entry");
        } catch (IllegalArgumentException e) {
            throw refused(e.getMessage());
        }
        if (sum != size) throw refused("its chunks add up to " + sum + " bytes, but it says " + size);
        return new Manifest(chunks);
    }

    private static IllegalArgumentException refused(String why) {
        return new IllegalArgumentException("not a manifest: " + why);
    }
}
