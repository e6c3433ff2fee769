package io.stasis.server.s3;

import io.stasis.core.files.FileInfo;
import io.stasis.core.volume.VolumeId;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The MD5 ETags of objects already hashed, so that a HEAD, a ranged GET or a repeated GET of a
 * large object does not read all of it again first. An entry is found only while the file has the
 * size and modification time (nanoseconds on btrfs) it had when hashed: any write, through S3 or
 * from a sandbox, changes the time and so misses. Bounded, least recently used out first.
 */
final class ETags {
    private static final int CAPACITY = 10_000;

    private record Key(VolumeId volume, String key, long size, Instant mtime) {
    }

    private final Map<Key, String> known = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Key, String> eldest) {
            return size() > CAPACITY;
        }
    };

    synchronized Optional<String> find(VolumeId volume, String key, FileInfo info) {
        return Optional.ofNullable(known.get(new Key(volume, key, info.size(), info.mtime())));
    }

    synchronized void remember(VolumeId volume, String key, FileInfo info, String etag) {
        known.put(new Key(volume, key, info.size(), info.mtime()), etag);
    }

    /** A new MD5 digest: S3's ETag of an object uploaded in one piece is the MD5 of its bytes. */
    static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 is always there", e);
        }
    }

    /** A digest as an ETag: quoted lowercase hex. */
    static String quoted(MessageDigest md5) {
        return "\"" + HexFormat.of().formatHex(md5.digest()) + "\"";
    }
}
