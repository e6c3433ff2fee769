package io.stasis.testkit.fake;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.spi.BucketCredentials;
import io.stasis.core.spi.BucketMount;
import io.stasis.core.spi.BucketMountId;
import io.stasis.core.spi.BucketMounts;
import io.stasis.testkit.BucketMountsSuite;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The BucketMounts contract held by the directory fake, and how a test reaches its buckets. */
class DirectoryBucketMountsContractTest extends BucketMountsSuite {
    private static final String BUCKET = "test-bucket";

    @TempDir
    Path dir;

    private DirectoryBucketMounts fake;

    @Override
    protected BucketMounts newMounts() {
        fake = new DirectoryBucketMounts(dir);
        fake.createBucket(BUCKET);
        return fake;
    }

    @Override
    protected BucketMount spec(BucketMountId id) {
        return BucketMount.of(id, URI.create("http://127.0.0.1:9000"), BUCKET, new BucketCredentials("fake-key", "fake-secret"));
    }

    @Override
    protected void afterEverythingUnmounted() {
        try (var left = Files.list(dir.resolve("mnt"))) {
            assertThat(left).as("mount points left").isEmpty();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aBucketsObjectsAreTheFilesInItsDirectory() throws IOException {
        Path bucket = fake.createBucket(BUCKET);
        Files.writeString(bucket.resolve("seeded.txt"), "put by the test");
        var mounted = fake.mount(spec(new BucketMountId("seed")));

        assertThat(Files.readString(mounted.hostPath().resolve("seeded.txt"))).isEqualTo("put by the test");
        Files.writeString(mounted.hostPath().resolve("written.txt"), "through the mount");
        assertThat(bucket.resolve("written.txt")).hasContent("through the mount");
    }
}
