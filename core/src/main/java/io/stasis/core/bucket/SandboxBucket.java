package io.stasis.core.bucket;

import io.stasis.core.spi.BucketCredentials;
import io.stasis.core.spi.BucketMount;
import io.stasis.core.spi.BucketMountId;
import io.stasis.core.sandbox.SandboxId;
import java.net.URI;
import java.util.List;
import java.util.Objects;

/**
 * An S3 bucket (or a prefix of it) that a sandbox mounts at {@code path}, as the catalog records
 * it: with the name of the tenant's secret that holds the key, never the key itself, so the key is
 * read again (and a changed secret used) at every mount.
 *
 * @param path              where it appears inside the sandbox (absolute, normalized)
 * @param endpoint          the S3-compatible service's base URL
 * @param region            the signing region
 * @param bucket            an existing bucket
 * @param prefix            only keys under it appear; empty for the whole bucket
 * @param readOnly          writes fail with {@code EROFS}
 * @param credentialsSecret the tenant's secret whose value is {@code ACCESS_KEY_ID:SECRET_ACCESS_KEY}
 */
public record SandboxBucket(String path, URI endpoint, String region, String bucket, String prefix, boolean readOnly,
                            String credentialsSecret) {
    /** The only {@code type} of mount there is so far. */
    public static final String TYPE_S3 = "s3";

    public SandboxBucket {
        Objects.requireNonNull(path);
        Objects.requireNonNull(endpoint);
        Objects.requireNonNull(region);
        Objects.requireNonNull(bucket);
        Objects.requireNonNull(prefix);
        Objects.requireNonNull(credentialsSecret);
    }

    /** The host id of the sandbox's mount at {@code index}: {@code <sandbox id>-<index>}, so a leftover tells whose it was. */
    public static BucketMountId mountId(SandboxId sandbox, int index) {
        return new BucketMountId(sandbox.value() + "-" + index);
    }

    /** What to ask the host's {@code BucketMounts} for, with the key read from the secret just now. */
    BucketMount toMount(BucketMountId id, BucketCredentials credentials) {
        return new BucketMount(id, endpoint, region, bucket, prefix, readOnly, credentials, List.of());
    }
}
