package io.stasis.blob.content;

import io.stasis.blob.s3.S3BlobStore;
import io.stasis.blob.s3.S3ProxyServer;
import io.stasis.core.spi.BlobStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The lock protocol on S3 (s3proxy in this JVM, on loopback). */
class StoreLocksS3Test extends StoreLocksContract {
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
    BlobStore newBackend() {
        return new S3BlobStore(server.newBucket());
    }
}
