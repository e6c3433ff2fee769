package io.stasis.core.spi;

import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.sandbox.SandboxId;
import java.util.List;

/** The catalog's record of which buckets a sandbox mounts (rows go when the sandbox's record is deleted). */
public interface BucketCatalog {
    /** Records the sandbox's bucket mounts, in order (replacing what it had). */
    void setBuckets(SandboxId sandbox, List<SandboxBucket> buckets);

    /** The sandbox's bucket mounts in order; the index of each is its mount's index. */
    List<SandboxBucket> bucketsOf(SandboxId sandbox);
}
