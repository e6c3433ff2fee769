package io.stasis.testkit;

import io.stasis.core.spi.BucketCredentials;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.ForwardingBlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;
import org.gaul.s3proxy.nio2blob.AbstractNio2BlobStore;
import org.gaul.s3proxy.nio2blob.TransientNio2BlobStore;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.http.AbortableInputStream;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * A real S3 server in the test's (or benchmark's) JVM: s3proxy on 127.0.0.1 and a port the kernel
 * picks, signature-v4 authentication with a random secret, objects in memory ({@link #inMemory()},
 * nothing to clean up) or as files under a directory ({@link #onDisk}, as the local blob backend
 * keeps them, so that the two differ by the protocol only). The one launcher of the project: the
 * blob store's tests, the bucket-mount tests and the benchmark all use it.
 *
 * <p>It counts what it serves, per key: every GET's {@code Range} header and the bytes actually
 * streamed, and every PUT; that is how a test proves a FUSE read fetched a range and not the whole
 * object. The secret holds characters an INI parser might mistake ({@code # ; = / +}).
 *
 * <p>Close it to free the port. (No JUnit callbacks here: the benchmark runs it without JUnit.)
 */
public final class S3TestServer implements AutoCloseable {
    private static final AtomicInteger BUCKETS = new AtomicInteger();

    private final AbstractNio2BlobStore backend;
    private final Map<String, AtomicLong> bytesServed = new ConcurrentHashMap<>();
    private final Map<String, List<String>> ranges = new ConcurrentHashMap<>();
    private final List<String> puts = new CopyOnWriteArrayList<>();
    private final BucketCredentials credentials =
            new BucketCredentials("stasis-test", HexFormat.of().formatHex(new SecureRandom().generateSeed(12)) + "#;=/+x");
    private final S3Proxy proxy;
    private final URI endpoint;

    /** Objects in memory. */
    public static S3TestServer inMemory() {
        return new S3TestServer(new TransientNio2BlobStore());
    }

    /** Objects as files under {@code directory} (a bucket is a directory); the directory is the caller's to remove. */
    public static S3TestServer onDisk(Path directory) {
        return new S3TestServer(new FilesystemNio2BlobStore(directory.toString()));
    }

    private S3TestServer(AbstractNio2BlobStore backend) {
        this.backend = backend;
        proxy = S3Proxy.builder()
                .blobStore(new Counting(backend))
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

    public URI endpoint() {
        return endpoint;
    }

    /** The one key the server accepts. */
    public BucketCredentials credentials() {
        return credentials;
    }

    /** Creates a new empty bucket, named uniquely in this JVM. */
    public String newBucket() {
        String bucket = "stasis-test-" + BUCKETS.incrementAndGet();
        backend.createContainer(bucket);
        return bucket;
    }

    /** Puts an object past the counters. */
    public void put(String bucket, String key, byte[] content) {
        put(bucket, key, new ByteArrayInputStream(content), content.length);
    }

    public void put(String bucket, String key, InputStream content, long length) {
        backend.putBlob(PutObjectRequest.builder().bucket(bucket).key(key).contentLength(length).build(), content);
    }

    /** The object's bytes, read past the counters, or empty. */
    public Optional<byte[]> get(String bucket, String key) {
        try (var in = backend.getBlob(GetObjectRequest.builder().bucket(bucket).key(key).build())) {
            return in == null ? Optional.empty() : Optional.of(in.readAllBytes());
        } catch (NoSuchKeyException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            if (e.getClass().getSimpleName().contains("NoSuch") || String.valueOf(e.getMessage()).contains("NoSuch")) return Optional.empty();
            throw e;
        }
    }

    public List<String> keys(String bucket) {
        var keys = new ArrayList<String>();
        for (S3Object o : backend.list(ListObjectsV2Request.builder().bucket(bucket).build()).contents()) keys.add(o.key());
        return keys;
    }

    /** Bytes streamed to clients from {@code bucket/key} so far. */
    public long bytesServed(String bucket, String key) {
        var n = bytesServed.get(bucket + "/" + key);
        return n == null ? 0 : n.get();
    }

    /** The {@code Range} header of every GET of {@code bucket/key} ({@code none} for a whole-object GET). */
    public List<String> ranges(String bucket, String key) {
        return List.copyOf(ranges.getOrDefault(bucket + "/" + key, List.of()));
    }

    /** {@code bucket/key} of every PUT received (not counting the test's own puts). */
    public List<String> puts() {
        return List.copyOf(puts);
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

    /** The backend as s3proxy serves it, counting GETs (ranges, bytes streamed) and PUTs. */
    private final class Counting extends ForwardingBlobStore {
        Counting(AbstractNio2BlobStore backend) {
            super(backend);
        }

        @Override
        public ResponseInputStream<GetObjectResponse> getBlob(GetObjectRequest request) {
            String key = request.bucket() + "/" + request.key();
            ranges.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(request.range() == null ? "none" : request.range());
            var served = bytesServed.computeIfAbsent(key, k -> new AtomicLong());
            var original = super.getBlob(request);
            InputStream counted = new FilterInputStream(original) {
                @Override
                public int read() throws IOException {
                    int b = super.read();
                    if (b >= 0) served.incrementAndGet();
                    return b;
                }

                @Override
                public int read(byte[] buffer, int offset, int length) throws IOException {
                    int n = super.read(buffer, offset, length);
                    if (n > 0) served.addAndGet(n);
                    return n;
                }
            };
            return new ResponseInputStream<>(original.response(), AbortableInputStream.create(counted, original::abort));
        }

        @Override
        public PutObjectResponse putBlob(PutObjectRequest request, InputStream content) {
            puts.add(request.bucket() + "/" + request.key());
            return super.putBlob(request, content);
        }
    }
}
