package io.stasis.testkit;

import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.BucketCatalog;
import io.stasis.core.spi.Catalog;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantUsage;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What every {@link BucketCatalog} must do, as the SQLite catalog does it: a sandbox's bucket
 * mounts in order, replaced as a whole, gone with the sandbox's record, and the memory their
 * daemons hold in the tenant's usage. A backend's test extends
 * this and supplies a fresh, empty catalog per test (also a {@link Catalog}, which deletes
 * sandboxes); the suite closes it.
 */
public abstract class BucketCatalogSuite<C extends Catalog & BucketCatalog> extends CatalogSuiteBase<C> {
    @Test
    void bucketsRoundTripInOrderAndAreReplacedAsAWhole() {
        var sandbox = SandboxId.random(); // no record needed: the mounts are set before it is recorded
        assertThat(catalog().bucketsOf(sandbox)).isEmpty();
        var whole = new SandboxBucket("/mnt/data", URI.create("https://s3.example.com"), "eu-west-1", "data", "", false, "S3_KEY");
        var prefix = new SandboxBucket("/mnt/logs ✓", URI.create("http://127.0.0.1:9000/"), "us-east-1", "logs", "app/2026/", true,
                "OTHER_KEY");
        var sameBucketAgain = new SandboxBucket("/mnt/again", URI.create("https://s3.example.com"), "eu-west-1", "data", "x/", true, "S3_KEY");

        catalog().setBuckets(sandbox, List.of(prefix, whole, sameBucketAgain));
        assertThat(catalog().bucketsOf(sandbox)).containsExactly(prefix, whole, sameBucketAgain);

        catalog().setBuckets(sandbox, List.of(whole));
        assertThat(catalog().bucketsOf(sandbox)).containsExactly(whole);
        catalog().setBuckets(sandbox, List.of());
        assertThat(catalog().bucketsOf(sandbox)).isEmpty();
    }

    @Test
    void deletingASandboxForgetsItsBucketsOnly() {
        var gone = CatalogFixtures.running(T0);
        var kept = CatalogFixtures.running(T0);
        catalog().insert(gone);
        catalog().insert(kept);
        var bucket = new SandboxBucket("/mnt/data", URI.create("https://s3.example.com"), "eu-west-1", "data", "", false, "S3_KEY");
        catalog().setBuckets(gone.id(), List.of(bucket));
        catalog().setBuckets(kept.id(), List.of(bucket, bucket));

        catalog().delete(gone.id());

        assertThat(catalog().bucketsOf(gone.id())).isEmpty();
        assertThat(catalog().bucketsOf(kept.id())).containsExactly(bucket, bucket);
    }

    @Test
    void aSandboxsBucketMountsHoldTheirDaemonsMemoryWhileItHasProcesses() {
        var a = TenantId.DEFAULT;
        var s = CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 1024, 100, T0);
        var bucket = new SandboxBucket("/data", URI.create("https://s3.example.com"), "us-east-1", "data", "", false, "KEY");
        catalog().setBuckets(s.id(), List.of(bucket, new SandboxBucket("/more", bucket.endpoint(), "us-east-1", "more", "", true, "KEY")));
        catalog().insert(s);
        long held = 1024 + 2L * SandboxBuckets.DAEMON_MEMORY_MB;

        assertThat(catalog().usage(a)).isEqualTo(new TenantUsage(1, held, 100));
        assertThat(catalog().nodeLoads()).containsExactlyEntriesOf(Map.of(catalog().localNode(), new TenantUsage(1, held, 100)));
        catalog().update(s.withState(new SandboxState.Stopped("user")));
        assertThat(catalog().usage(a)).as("stopped: no daemon counts").isEqualTo(new TenantUsage(0, 0, 100));
    }
}
