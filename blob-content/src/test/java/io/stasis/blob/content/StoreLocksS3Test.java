package io.stasis.blob.content;

import io.stasis.blob.s3.S3BlobStore;
import io.stasis.blob.s3.S3ProxyServer;
import io.stasis.core.spi.BlobStore;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The lock protocol on S3 (s3proxy in this JVM, on loopback). */
class StoreLocksS3Test extends StoreLocksContract {
    @RegisterExtension
    static final S3ProxyServer S3 = new S3ProxyServer();

    @Override
    BlobStore newBackend() {
        return new S3BlobStore(S3.newBucket());
    }
}
