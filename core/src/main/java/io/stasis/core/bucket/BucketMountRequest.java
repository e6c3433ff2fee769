package io.stasis.core.bucket;

/**
 * One entry of a create's {@code mounts}, as the caller sent it (any field may be missing):
 * checked and turned into a {@link SandboxBucket} by {@link SandboxBuckets#resolve}.
 */
public record BucketMountRequest(String type, String endpoint, String region, String bucket, String prefix, String path, Boolean readOnly,
                                 String credentialsSecret) {
}
