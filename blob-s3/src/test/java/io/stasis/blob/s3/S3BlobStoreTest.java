package io.stasis.blob.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BlobStore;
import io.stasis.testkit.BlobStoreSuite;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The BlobStore contract on a real S3 server (s3proxy, in this JVM, on loopback). A Surefire test,
 * not an IT: it needs neither root nor host tools, only a port on 127.0.0.1.
 */
class S3BlobStoreTest extends BlobStoreSuite {
    private static S3ProxyServer server;

    @BeforeAll
    static void startServer() {
        server = new S3ProxyServer();
    }

    @AfterAll
    static void stopServer() {
        server.close();
    }

    @Override
    protected BlobStore newStore() {
        return new S3BlobStore(server.newBucket());
    }

    @Test
    void aKeyPrefixKeepsStoresApartInOneBucket() {
        var config = server.newBucket();
        try (var left = new S3BlobStore(config.withKeyPrefix("left/")); var right = new S3BlobStore(config.withKeyPrefix("right/"))) {
            left.put("k", bytes("L"));
            right.put("k", bytes("R"));
            assertThat(left.listAll("").map(i -> i.key()).toList()).containsExactly("k");
            assertThat(new String(readFrom(right, "k"))).isEqualTo("R");
            left.delete("k");
            assertThat(right.exists("k")).isTrue();
        }
    }

    @Test
    void aMissingBucketIsRefusedAtOnceByName() {
        assertThatThrownBy(() -> new S3BlobStore(server.config("no-such-bucket")))
                .isInstanceOfSatisfying(StasisException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED);
                    assertThat(e.getMessage()).contains("no-such-bucket").contains("404");
                });
    }

    @Test
    void aWrongSecretIsRefusedAndTheSecretNeverShown() {
        var good = server.newBucket();
        var wrong = new S3BlobStoreConfig(good.endpoint(), good.bucket(), good.region(),
                Optional.of(new S3BlobStoreConfig.Credentials("stasis-test", "not-the-secret")), true, "", good.callTimeout());
        assertThatThrownBy(() -> new S3BlobStore(wrong)).isInstanceOfSatisfying(StasisException.class,
                e -> assertThat(e.getMessage()).contains("403").doesNotContain("not-the-secret"));
        assertThat(wrong.toString()).doesNotContain("not-the-secret");
    }

    @Test
    void anUnreachableEndpointIsARetryableFailure() throws Exception {
        int closedPort;
        try (var socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }
        var config = server.config("any-bucket");
        var unreachable = S3BlobStoreConfig.of(URI.create("http://127.0.0.1:" + closedPort), "any-bucket", "us-east-1",
                config.credentials().orElseThrow());
        assertThatThrownBy(() -> new S3BlobStore(unreachable)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("127.0.0.1:" + closedPort);
    }

    @Test
    void badConfigurationIsRefusedByName() {
        var c = server.newBucket();
        assertThatThrownBy(() -> S3BlobStoreConfig.of(c.endpoint().orElseThrow(), "Bad_Bucket", "us-east-1", c.credentials().orElseThrow()))
                .hasMessageContaining("Bad_Bucket");
        assertThatThrownBy(() -> c.withKeyPrefix("no-slash")).hasMessageContaining("no-slash");
        assertThatThrownBy(() -> S3BlobStoreConfig.of(URI.create("ftp://x"), "bucket", "us-east-1", c.credentials().orElseThrow()))
                .hasMessageContaining("ftp://x");
    }

    private static byte[] readFrom(BlobStore store, String key) {
        try (var in = store.get(key).orElseThrow()) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
