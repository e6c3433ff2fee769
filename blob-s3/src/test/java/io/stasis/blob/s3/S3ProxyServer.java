package io.stasis.blob.s3;

import java.net.URI;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicInteger;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.nio2blob.TransientNio2BlobStore;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real S3 server in the test's JVM: s3proxy on 127.0.0.1 and a port the kernel picks, keeping
 * objects in memory (nothing on disk to clean up), with signature-v4 authentication and a random
 * secret. Each test asks for a fresh bucket. Close it to free the port, or register it as a
 * class's extension ({@code @RegisterExtension static final S3ProxyServer S3 = new S3ProxyServer();}),
 * which closes it after the class's tests.
 */
public final class S3ProxyServer implements AutoCloseable, AfterAllCallback {
    private static final AtomicInteger BUCKETS = new AtomicInteger();

    private final TransientNio2BlobStore backend = new TransientNio2BlobStore();
    private final S3BlobStoreConfig.Credentials credentials =
            new S3BlobStoreConfig.Credentials("stasis-test", HexFormat.of().formatHex(new SecureRandom().generateSeed(16)));
    private final S3Proxy proxy;
    private final URI endpoint;

    public S3ProxyServer() {
        proxy = S3Proxy.builder()
                .blobStore(backend)
                .endpoint(URI.create("http://127.0.0.1:0"))
                .awsAuthentication(AuthenticationType.AWS_V4, credentials.accessKeyId(), credentials.secretAccessKey())
                .build();
        try {
            proxy.start();
        } catch (Exception e) {
            throw new IllegalStateException("s3proxy did not start on 127.0.0.1", e);
        }
        endpoint = URI.create("http://127.0.0.1:" + proxy.getPort());
    }

    /** Creates a new empty bucket and returns the configuration of a store on it. */
    public S3BlobStoreConfig newBucket() {
        String bucket = "stasis-test-" + BUCKETS.incrementAndGet();
        backend.createContainer(bucket);
        return config(bucket);
    }

    /** A store's configuration for {@code bucket}, which may not exist. */
    public S3BlobStoreConfig config(String bucket) {
        return S3BlobStoreConfig.of(endpoint, bucket, "us-east-1", credentials);
    }

    public URI endpoint() {
        return endpoint;
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        try {
            proxy.stop();
        } catch (Exception e) {
            throw new IllegalStateException("s3proxy did not stop", e);
        }
        backend.close();
    }
}
