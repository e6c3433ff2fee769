package io.stasis.blob.s3;

import io.stasis.testkit.S3TestServer;
import java.net.URI;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The project's in-process S3 server ({@link S3TestServer}, objects in memory) as the blob store's
 * tests want it: a fresh bucket as an {@link S3BlobStoreConfig}. Close it to free the port, or
 * register it as a class's extension ({@code @RegisterExtension static final S3ProxyServer S3 = new S3ProxyServer();}).
 */
public final class S3ProxyServer implements AutoCloseable, AfterAllCallback {
    private final S3TestServer server = S3TestServer.inMemory();

    /** Creates a new empty bucket and returns the configuration of a store on it. */
    public S3BlobStoreConfig newBucket() {
        return config(server.newBucket());
    }

    /** A store's configuration for {@code bucket}, which may not exist. */
    public S3BlobStoreConfig config(String bucket) {
        var key = server.credentials();
        return S3BlobStoreConfig.of(server.endpoint(), bucket, "us-east-1", new S3BlobStoreConfig.Credentials(key.accessKeyId(), key.secretAccessKey()));
    }

    public URI endpoint() {
        return server.endpoint();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        server.close();
    }
}
