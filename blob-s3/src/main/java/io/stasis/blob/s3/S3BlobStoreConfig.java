package io.stasis.blob.s3;

import io.stasis.core.spi.BlobStore;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where an {@link S3BlobStore} keeps its objects. Every value is checked here, at once, and a bad
 * one is named in the message.
 *
 * @param endpoint    the S3 service's base URL, e.g. {@code http://127.0.0.1:9000} for MinIO or
 *                    s3proxy; empty for AWS itself (the region's endpoint)
 * @param bucket      an existing bucket (3 to 63 characters: lowercase letters, digits, {@code . -})
 * @param region      the signing region, e.g. {@code us-east-1} (most S3-compatible servers accept
 *                    any)
 * @param credentials an access key; empty for the SDK's default chain (environment, profile,
 *                    instance role)
 * @param pathStyle   {@code http://host/bucket/key} instead of {@code http://bucket.host/key}:
 *                    what most self-hosted servers need (default true)
 * @param keyPrefix   prepended to every key, so several stores can share a bucket: empty, or a
 *                    valid key prefix ending with {@code /} (default empty)
 * @param callTimeout the longest one call may take, retries included (default 5 minutes)
 */
public record S3BlobStoreConfig(Optional<URI> endpoint, String bucket, String region, Optional<Credentials> credentials,
                                boolean pathStyle, String keyPrefix, Duration callTimeout) {
    private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");

    public S3BlobStoreConfig {
        Objects.requireNonNull(endpoint, "endpoint");
        endpoint.ifPresent(uri -> {
            if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null)
                throw new IllegalArgumentException("endpoint must be an http or https URL with a host, was " + uri);
        });
        if (bucket == null || !BUCKET.matcher(bucket).matches())
            throw new IllegalArgumentException("bucket must be 3 to 63 lowercase letters, digits, '.' or '-', was '" + bucket + "'");
        if (region == null || region.isBlank()) throw new IllegalArgumentException("region must be set, e.g. us-east-1");
        Objects.requireNonNull(credentials, "credentials");
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        if (!keyPrefix.isEmpty()) {
            if (!keyPrefix.endsWith("/")) throw new IllegalArgumentException("keyPrefix must end with '/', was '" + keyPrefix + "'");
            BlobStore.checkPrefix(keyPrefix);
        }
        if (callTimeout == null || callTimeout.isNegative() || callTimeout.isZero())
            throw new IllegalArgumentException("callTimeout must be positive, was " + callTimeout);
    }

    /** A bucket at an S3-compatible endpoint, path-style, with an access key, no prefix. */
    public static S3BlobStoreConfig of(URI endpoint, String bucket, String region, Credentials credentials) {
        return new S3BlobStoreConfig(Optional.of(endpoint), bucket, region, Optional.of(credentials), true, "", Duration.ofMinutes(5));
    }

    public S3BlobStoreConfig withKeyPrefix(String prefix) {
        return new S3BlobStoreConfig(endpoint, bucket, region, credentials, pathStyle, prefix, callTimeout);
    }

    public S3BlobStoreConfig withPathStyle(boolean pathStyle) {
        return new S3BlobStoreConfig(endpoint, bucket, region, credentials, pathStyle, keyPrefix, callTimeout);
    }

    public S3BlobStoreConfig withCallTimeout(Duration timeout) {
        return new S3BlobStoreConfig(endpoint, bucket, region, credentials, pathStyle, keyPrefix, timeout);
    }

    /** An access key. {@link #toString()} never shows the secret. */
    public record Credentials(String accessKeyId, String secretAccessKey) {
        public Credentials {
            if (accessKeyId == null || accessKeyId.isBlank()) throw new IllegalArgumentException("accessKeyId must be set");
            if (secretAccessKey == null || secretAccessKey.isEmpty()) throw new IllegalArgumentException("secretAccessKey must be set");
        }

        @Override
        public String toString() {
            return "Credentials[accessKeyId=" + accessKeyId + ", secretAccessKey=***]";
        }
    }
}
