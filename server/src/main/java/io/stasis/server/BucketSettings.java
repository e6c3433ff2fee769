package io.stasis.server;

import io.stasis.core.network.Cidr;
import java.time.Duration;
import java.util.List;

/**
 * Bucket mounts as the operator sets them.
 *
 * @param endpointsAllow non-public ranges that mounts' endpoints may resolve to ({@code --bucket-endpoints-allow}, default none)
 * @param releaseWait    how long a stop, hibernate or delete waits for a mount's uploads before it goes on and leaves
 *                       them to finish in the background ({@code --bucket-release-wait}, default 10 s)
 */
record BucketSettings(List<Cidr> endpointsAllow, Duration releaseWait) {
    static final String USAGE = """
              --bucket-endpoints-allow LIST  non-public ranges (CIDRs, comma-separated) that bucket
                                       mounts' S3 endpoints may resolve to; by default only public
                                       addresses (the FUSE client connects from this host)
              --bucket-release-wait D  how long a stop, hibernate or delete waits for a bucket
                                       mount's uploads (default 10s); what is still pending then is
                                       uploaded in the background (the sandbox shows how many)
            """;

    static BucketSettings defaults() {
        return new BucketSettings(List.of(), Duration.ofSeconds(10));
    }

    BucketSettings {
        endpointsAllow = List.copyOf(endpointsAllow);
    }

    BucketSettings withEndpointsAllow(List<Cidr> ranges) {
        return new BucketSettings(ranges, releaseWait);
    }

    BucketSettings withReleaseWait(Duration wait) {
        return new BucketSettings(endpointsAllow, wait);
    }
}
