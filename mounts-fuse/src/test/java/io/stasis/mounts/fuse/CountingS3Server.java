package io.stasis.mounts.fuse;

import io.stasis.core.spi.BucketCredentials;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
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
 * A real S3 server in the test's JVM (s3proxy on 127.0.0.1, objects in memory) that counts what
 * it serves: per key, every GET's {@code Range} header and the bytes actually streamed to the
 * client, and every PUT. That is how the tests prove a FUSE read fetched a few ranges and not the
 * whole object. The secret holds characters an INI parser might mistake ({@code # ; = / +}).
 */
public final class CountingS3Server implements AutoCloseable {
    private static final AtomicInteger BUCKETS = new AtomicInteger();

    private final TransientNio2BlobStore backend = new TransientNio2BlobStore();
    private final Map<String, AtomicLong> bytesServed = new ConcurrentHashMap<>();
    private final Map<String, List<String>> ranges = new ConcurrentHashMap<>();
    private final List<String> puts = new CopyOnWriteArrayList<>();
    private final BucketCredentials credentials =
            new BucketCredentials("stasis-test", HexFormat.of().formatHex(new SecureRandom().generateSeed(12)) + "#;=/+x");
    private final S3Proxy proxy;
    private final URI endpoint;

    public CountingS3Server() {
        var counting = new ForwardingBlobStore(backend) {
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
        };
        proxy = S3Proxy.builder()
                .blobStore(counting)
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

    public URI endpoint() {
        return endpoint;
    }

    public BucketCredentials credentials() {
        return credentials;
    }

    public String newBucket() {
        String bucket = "mounts-test-" + BUCKETS.incrementAndGet();
        backend.createContainer(bucket);
        return bucket;
    }

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
            throw new java.io.UncheckedIOException(e);
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
        }
        backend.close();
    }
}
