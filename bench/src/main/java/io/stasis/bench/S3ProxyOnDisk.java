package io.stasis.bench;

import io.stasis.blob.s3.S3BlobStoreConfig;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;

/**
 * A real S3 server in the benchmark's JVM: s3proxy on 127.0.0.1 and a port the kernel picks, with
 * signature-v4 authentication and a random secret, keeping objects as files under a directory
 * (its filesystem backend), as the local backend does; so the two backends' figures differ by the
 * S3 protocol, not by memory against disk. blob-s3's tests have their own, in memory. Close it to
 * free the port; the directory is the caller's to remove.
 */
final class S3ProxyOnDisk implements AutoCloseable {
    private final FilesystemNio2BlobStore backend;
    private final S3BlobStoreConfig.Credentials credentials =
            new S3BlobStoreConfig.Credentials("stasis-bench", HexFormat.of().formatHex(new SecureRandom().generateSeed(16)));
    private final S3Proxy proxy;
    private final URI endpoint;
    private int buckets;

    S3ProxyOnDisk(Path directory) {
        backend = new FilesystemNio2BlobStore(directory.toString());
        proxy = S3Proxy.builder()
                .blobStore(backend)
                .endpoint(URI.create("http://127.0.0.1:0"))
                .awsAuthentication(AuthenticationType.AWS_V4, credentials.accessKeyId(), credentials.secretAccessKey())
                .build();
        try {
            proxy.start();
        } catch (Exception e) {
            backend.close();
            throw new IllegalStateException("s3proxy did not start on 127.0.0.1", e);
        }
        endpoint = URI.create("http://127.0.0.1:" + proxy.getPort());
    }

    /** Creates a new empty bucket (a directory of that name) and returns a store's configuration for it. */
    S3BlobStoreConfig newBucket() {
        String bucket = "stasis-bench-" + (++buckets);
        backend.createContainer(bucket);
        return S3BlobStoreConfig.of(endpoint, bucket, "us-east-1", credentials);
    }

    URI endpoint() {
        return endpoint;
    }

    @Override
    public void close() {
        try {
            proxy.stop();
        } catch (Exception e) {
            throw new IllegalStateException("s3proxy did not stop", e);
        } finally {
            backend.close();
        }
    }
}
