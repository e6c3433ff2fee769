package io.stasis.mounts.fuse;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.spi.BucketMount;
import io.stasis.core.spi.BucketMountId;
import io.stasis.core.spi.BucketMounts;
import io.stasis.host.FileTrees;
import io.stasis.testkit.BucketMountsSuite;
import io.stasis.testkit.HostLeaks;
import io.stasis.testkit.S3TestServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The BucketMounts contract through rclone against a real S3 server on loopback (s3proxy in this
 * JVM), set up as {@link FuseBucketMountsIT} is. After every test: no FUSE mount below the test's
 * directory, no process working in it, and the directory itself is removed.
 */
@Tag("root")
class FuseBucketMountsContractIT extends BucketMountsSuite {
    private static S3TestServer s3;

    private Path dir;
    private String bucket;

    @BeforeAll
    static void startS3() {
        s3 = S3TestServer.inMemory();
    }

    @AfterAll
    static void stopS3() {
        if (s3 != null) s3.close();
    }

    @Override
    protected BucketMounts newMounts() {
        try {
            dir = Files.createTempDirectory("stasis-mounts-");
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx--x--x")); // as the data directory is
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        bucket = s3.newBucket();
        return FuseBucketMounts.open(dir.resolve("mounts"), FuseBucketMounts.Options.DEFAULTS.withWriteBack(Duration.ofMillis(200))
                .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofSeconds(30)));
    }

    @Override
    protected BucketMount spec(BucketMountId id) {
        return BucketMount.of(id, s3.endpoint(), bucket, s3.credentials());
    }

    @Override
    protected void afterEverythingUnmounted() {
        try {
            assertThat(HostLeaks.mountsUnder(dir)).as("FUSE mounts left").isEmpty();
            assertThat(HostLeaks.processesWorkingUnder(dir)).as("rclone daemons left").isEmpty();
        } finally {
            try {
                if (HostLeaks.mountsUnder(dir).isEmpty()) FileTrees.deleteRecursively(dir);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
