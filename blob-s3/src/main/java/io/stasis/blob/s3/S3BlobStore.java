package io.stasis.blob.s3;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.spi.BlobInfo;
import io.stasis.core.spi.BlobPage;
import io.stasis.core.spi.BlobStore;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Optional;
import java.util.function.Supplier;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link BlobStore} on an S3-compatible bucket (AWS S3, MinIO, Ceph, s3proxy...), through the AWS
 * SDK v2's synchronous client on Apache HttpClient 5. Each object is one PutObject, which S3 makes visible whole or not at
 * all; objects are at most 5 GiB (no multipart upload: the content store's chunks are small).
 *
 * <p>Errors: no connection, a timeout, HTTP 5xx and 429 (after the SDK's own retries) are
 * {@link UncheckedIOException}, worth retrying; any other refusal (403 wrong key, 404 no such
 * bucket, 400) is {@code runtime_failed} naming the endpoint, bucket, key and S3's error code.
 *
 * <p>The SDK's optional request checksums (CRC32 trailers, the default since SDK 2.30) are off:
 * several S3-compatible servers reject them, and the content store checks every chunk's SHA-256
 * when it reads it back.
 */
public final class S3BlobStore implements BlobStore {
    private static final Logger log = LoggerFactory.getLogger(S3BlobStore.class);
    /** S3's limit for one PutObject. */
    private static final long MAX_OBJECT_SIZE = 5L << 30;

    private final S3BlobStoreConfig config;
    private final S3Client client;

    /**
     * Connects and checks that the bucket is there.
     * <p>On failure: {@code runtime_failed} naming the endpoint and bucket and what S3 said, or
     * {@link UncheckedIOException} when the endpoint cannot be reached; nothing is left open.
     */
    public S3BlobStore(S3BlobStoreConfig config) {
        this.config = config;
        var builder = S3Client.builder()
                .region(Region.of(config.region()))
                .credentialsProvider(credentials(config))
                .forcePathStyle(config.pathStyle())
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .httpClientBuilder(Apache5HttpClient.builder())
                .overrideConfiguration(o -> o.apiCallTimeout(config.callTimeout()));
        config.endpoint().ifPresent(builder::endpointOverride);
        this.client = builder.build();
        try {
            call("check bucket", null, () -> client.headBucket(b -> b.bucket(config.bucket())));
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
        log.atInfo().addKeyValue("endpoint", config.endpoint().map(Object::toString).orElse("aws"))
                .addKeyValue("bucket", config.bucket()).addKeyValue("prefix", config.keyPrefix()).log("S3 blob store opened");
    }

    @Override
    public void put(String key, InputStream content, long length) {
        BlobStore.checkKey(key);
        if (length < 0 || length > MAX_OBJECT_SIZE)
            throw new IllegalArgumentException("length of " + key + " must be 0 to 5 GiB (one PutObject), was " + length);
        call("put", key, () -> client.putObject(b -> b.bucket(config.bucket()).key(s3Key(key)).contentLength(length),
                RequestBody.fromInputStream(content, length)));
    }

    @Override
    public Optional<InputStream> get(String key) {
        BlobStore.checkKey(key);
        try {
            ResponseInputStream<GetObjectResponse> response = call("get", key,
                    () -> client.getObject(b -> b.bucket(config.bucket()).key(s3Key(key))));
            return Optional.of(new AbortingStream(response));
        } catch (NotFound e) {
            return Optional.empty();
        }
    }

    @Override
    public Optional<BlobInfo> head(String key) {
        BlobStore.checkKey(key);
        try {
            HeadObjectResponse head = call("head", key, () -> client.headObject(b -> b.bucket(config.bucket()).key(s3Key(key))));
            return Optional.of(new BlobInfo(key, head.contentLength(), head.lastModified()));
        } catch (NotFound e) {
            return Optional.empty();
        }
    }

    @Override
    public BlobPage list(String prefix, Optional<String> pageToken, int maxKeys) {
        BlobStore.checkPrefix(prefix);
        BlobStore.checkPageSize(maxKeys);
        ListObjectsV2Response page = call("list", prefix.isEmpty() ? null : prefix, () -> client.listObjectsV2(b -> {
            b.bucket(config.bucket()).prefix(s3Key(prefix)).maxKeys(maxKeys);
            pageToken.ifPresent(b::continuationToken);
        }));
        var blobs = page.contents().stream()
                .map(o -> new BlobInfo(o.key().substring(config.keyPrefix().length()), size(o), o.lastModified()))
                .toList();
        boolean more = Boolean.TRUE.equals(page.isTruncated()) && page.nextContinuationToken() != null;
        return new BlobPage(blobs, more ? Optional.of(page.nextContinuationToken()) : Optional.empty());
    }

    @Override
    public void delete(String key) {
        BlobStore.checkKey(key);
        call("delete", key, () -> client.deleteObject(b -> b.bucket(config.bucket()).key(s3Key(key))));
    }

    @Override
    public void close() {
        client.close();
    }

    @Override
    public String toString() {
        return "s3:" + config.endpoint().map(Object::toString).orElse("aws") + "/" + config.bucket() + "/" + config.keyPrefix();
    }

    private String s3Key(String key) {
        return config.keyPrefix() + key;
    }

    private static long size(S3Object object) {
        return object.size() == null ? 0 : object.size();
    }

    private static AwsCredentialsProvider credentials(S3BlobStoreConfig config) {
        return config.credentials()
                .<AwsCredentialsProvider>map(c -> StaticCredentialsProvider.create(AwsBasicCredentials.create(c.accessKeyId(), c.secretAccessKey())))
                .orElseGet(() -> DefaultCredentialsProvider.builder().build());
    }

    /** Thrown inside this class only, by get and head: the object (not the bucket) does not exist. */
    private static final class NotFound extends RuntimeException {
        NotFound() {
            super(null, null, false, false);
        }
    }

    /** Runs one SDK call and sorts its failure into retryable ({@link UncheckedIOException}) or not. */
    private <T> T call(String step, String key, Supplier<T> action) {
        try {
            return action.get();
        } catch (S3Exception e) {
            boolean lookup = "get".equals(step) || "head".equals(step);
            if (lookup && (e instanceof NoSuchKeyException || e.statusCode() == 404 && !"NoSuchBucket".equals(code(e)))) throw new NotFound();
            if (e.statusCode() >= 500 || e.statusCode() == 429)
                throw new UncheckedIOException(describe(step, key) + ": HTTP " + e.statusCode() + " " + code(e), new IOException(e));
            var details = new LinkedHashMap<String, Object>();
            details.put("step", "s3 " + step);
            details.put("bucket", config.bucket());
            if (key != null) details.put("key", key);
            details.put("status", e.statusCode());
            details.put("s3Error", code(e));
            throw new StasisException(ErrorCode.RUNTIME_FAILED, describe(step, key) + " was refused: HTTP " + e.statusCode() + " "
                    + code(e) + (e.awsErrorDetails() == null ? "" : " (" + e.awsErrorDetails().errorMessage() + ")"), details, e);
        } catch (SdkClientException e) {
            throw new UncheckedIOException(describe(step, key) + " failed: " + e.getMessage(), new IOException(e));
        } catch (SdkException e) {
            throw new UncheckedIOException(describe(step, key) + " failed: " + e.getMessage(), new IOException(e));
        }
    }

    private String describe(String step, String key) {
        return "s3 " + step + (key == null ? "" : " " + key) + " at " + this;
    }

    private static String code(S3Exception e) {
        return e.awsErrorDetails() == null || e.awsErrorDetails().errorCode() == null ? "" : e.awsErrorDetails().errorCode();
    }

    /**
     * Closing a response before its end would drain the rest of it to reuse the connection; abort
     * instead, which drops the connection and costs no download. I/O failures of the body are
     * {@link IOException}s as for any stream.
     */
    private static final class AbortingStream extends FilterInputStream {
        private final ResponseInputStream<?> response;
        private boolean ended;

        AbortingStream(ResponseInputStream<?> response) {
            super(response);
            this.response = response;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b < 0) ended = true;
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n < 0) ended = true;
            return n;
        }

        @Override
        public void close() throws IOException {
            if (!ended) response.abort();
            super.close();
        }
    }
}
