package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.DeletedObject;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/** The S3 endpoint of volumes with the real AWS SDK v2 (path-style, SigV4 with the credential as key), against files in a real sandbox. */
@Tag("root")
class S3ApiIT {
    private static ServiceFixture service;
    private static RawApi api;
    private static String sandbox;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start();
        api = new RawApi(service.url, service.rootKey);
        api.post("/v1/volumes", "{\"name\": \"bucket\", \"sizeMb\": 128}");
        sandbox = api.post("/v1/sandboxes", "{\"template\": \"tiny\", \"volumes\": [{\"volume\": \"bucket\", \"path\": \"/data\"}]}").get("id").asText();
    }

    @AfterAll
    static void stop() {
        try {
            api.call("DELETE", "/v1/sandboxes/" + sandbox, null);
            api.call("DELETE", "/v1/volumes/bucket?force=true", null);
        } finally {
            api.close();
            service.close();
        }
    }

    private static S3Client client(String credential) {
        return S3Client.builder()
                .endpointOverride(URI.create(service.url + "/s3"))
                .forcePathStyle(true)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(credential, credential)))
                .httpClientBuilder(Apache5HttpClient.builder())
                .build();
    }

    @Test
    void putGetHeadListDeleteWithTheAwsSdk() {
        try (var s3 = client(service.rootKey)) {
            s3.putObject(b -> b.bucket("bucket").key("hello.txt"), RequestBody.fromString("hello from s3"));
            s3.putObject(b -> b.bucket("bucket").key("dir/sub/a.txt"), RequestBody.fromString("a"));
            s3.putObject(b -> b.bucket("bucket").key("dir/b.txt"), RequestBody.fromString("bb"));
            // The sandbox sees them as files; what it writes is an object.
            assertThat(api.sh(sandbox, "cat /data/hello.txt; cat /data/dir/sub/a.txt; echo; echo inside > /data/dir/c.txt")).isEqualTo("hello from s3a\n");
            assertThat(s3.getObjectAsBytes(b -> b.bucket("bucket").key("dir/c.txt")).asUtf8String()).isEqualTo("inside\n");
            var head = s3.headObject(b -> b.bucket("bucket").key("dir/b.txt"));
            assertThat(head.contentLength()).isEqualTo(2);
            assertThat(head.eTag()).isEqualTo("\"" + md5Hex("bb".getBytes(StandardCharsets.UTF_8)) + "\"");

            var all = s3.listObjectsV2(b -> b.bucket("bucket")).contents().stream().map(S3Object::key).toList();
            assertThat(all).containsExactly("dir/b.txt", "dir/c.txt", "dir/sub/a.txt", "hello.txt");
            var grouped = s3.listObjectsV2(b -> b.bucket("bucket").prefix("dir/").delimiter("/"));
            assertThat(grouped.contents()).extracting(S3Object::key).containsExactly("dir/b.txt", "dir/c.txt");
            assertThat(grouped.commonPrefixes()).extracting(p -> p.prefix()).containsExactly("dir/sub/");
            // Pages, with continuation tokens.
            var keys = new ArrayList<String>();
            s3.listObjectsV2Paginator(b -> b.bucket("bucket").maxKeys(1)).contents().forEach(o -> keys.add(o.key()));
            assertThat(keys).containsExactlyElementsOf(all);

            s3.deleteObject(b -> b.bucket("bucket").key("hello.txt"));
            assertThatThrownBy(() -> s3.getObjectAsBytes(b -> b.bucket("bucket").key("hello.txt"))).isInstanceOf(NoSuchKeyException.class);
            assertThat(api.sh(sandbox, "ls /data")).isEqualTo("dir\n");
        }
    }

    @Test
    void multipartUploadAssemblesThePartsAndAbortLeavesNothing() {
        byte[] data = new byte[12 << 20];
        new Random(3).nextBytes(data);
        try (var s3 = client(service.rootKey)) {
            String uploadId = s3.createMultipartUpload(b -> b.bucket("bucket").key("big/blob.bin")).uploadId();
            var parts = new ArrayList<CompletedPart>();
            int partSize = 5 << 20;
            for (int n = 1, off = 0; off < data.length; n++, off += partSize) {
                byte[] part = Arrays.copyOfRange(data, off, Math.min(data.length, off + partSize));
                int number = n;
                String etag = s3.uploadPart(b -> b.bucket("bucket").key("big/blob.bin").uploadId(uploadId).partNumber(number),
                        RequestBody.fromBytes(part)).eTag();
                parts.add(CompletedPart.builder().partNumber(n).eTag(etag).build());
            }
            var completed = s3.completeMultipartUpload(b -> b.bucket("bucket").key("big/blob.bin").uploadId(uploadId)
                    .multipartUpload(CompletedMultipartUpload.builder().parts(parts).build()));
            assertThat(completed.eTag()).endsWith("-3\"");
            assertThat(s3.headObject(b -> b.bucket("bucket").key("big/blob.bin")).eTag()).isEqualTo(completed.eTag());
            assertThat(s3.getObjectAsBytes(b -> b.bucket("bucket").key("big/blob.bin")).asByteArray()).isEqualTo(data);
            assertThat(api.sh(sandbox, "wc -c < /data/big/blob.bin").strip()).isEqualTo(Integer.toString(data.length));
            // Figures: one 12 MiB PutObject and GetObject through the SDK (signed aws-chunked body, MD5 ETag).
            long start = System.nanoTime();
            s3.putObject(b -> b.bucket("bucket").key("big/single.bin"), RequestBody.fromBytes(data));
            long putMs = (System.nanoTime() - start) / 1_000_000;
            start = System.nanoTime();
            assertThat(s3.getObjectAsBytes(b -> b.bucket("bucket").key("big/single.bin")).asByteArray()).isEqualTo(data);
            long getMs = (System.nanoTime() - start) / 1_000_000;
            System.out.println("S3ApiIT figures: PutObject 12 MiB " + putMs + " ms, GetObject 12 MiB " + getMs + " ms");
            s3.deleteObject(b -> b.bucket("bucket").key("big/single.bin"));

            String aborted = s3.createMultipartUpload(b -> b.bucket("bucket").key("gone.bin")).uploadId();
            s3.uploadPart(b -> b.bucket("bucket").key("gone.bin").uploadId(aborted).partNumber(1), RequestBody.fromString("x"));
            s3.abortMultipartUpload(b -> b.bucket("bucket").key("gone.bin").uploadId(aborted));
            assertThatThrownBy(() -> s3.uploadPart(b -> b.bucket("bucket").key("gone.bin").uploadId(aborted).partNumber(2),
                    RequestBody.fromString("y"))).isInstanceOf(S3Exception.class)
                    .satisfies(e -> assertThat(((S3Exception) e).awsErrorDetails().errorCode()).isEqualTo("NoSuchUpload"));
            assertThat(api.sh(sandbox, "ls /data")).doesNotContain("gone.bin");
        }
    }

    @Test
    void aPutPastTheVolumesSizeFailsAndKeepsTheOldObject() {
        api.post("/v1/volumes", "{\"name\": \"small\", \"sizeMb\": 16}");
        try (var s3 = client(service.rootKey)) {
            s3.putObject(b -> b.bucket("small").key("f"), RequestBody.fromString("old"));
            byte[] big = new byte[24 << 20];
            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("small").key("f"), RequestBody.fromBytes(big))).isInstanceOf(S3Exception.class)
                    .satisfies(e -> assertThat(((S3Exception) e).statusCode()).isEqualTo(507));
            assertThat(s3.getObjectAsBytes(b -> b.bucket("small").key("f")).asUtf8String()).isEqualTo("old");
            assertThat(s3.listObjectsV2(b -> b.bucket("small")).contents()).extracting(S3Object::key).containsExactly("f");
        } finally {
            api.call("DELETE", "/v1/volumes/small", null);
        }
    }

    @Test
    void keysCannotLeaveTheVolume() {
        // A symlink the sandbox made resolves inside the volume, never to the host's files.
        api.sh(sandbox, "ln -sf /etc/hostname /data/link; mkdir -p /data/etc; echo volume-file > /data/etc/hostname; ln -sfn / /data/up");
        try (var s3 = client(service.rootKey)) {
            assertThat(s3.getObjectAsBytes(b -> b.bucket("bucket").key("link")).asUtf8String()).isEqualTo("volume-file\n");
            assertThatThrownBy(() -> s3.getObjectAsBytes(b -> b.bucket("bucket").key("up/proc/self/environ"))).isInstanceOf(S3Exception.class);
            assertThat(s3.getObjectAsBytes(b -> b.bucket("bucket").key("up/etc/hostname")).asUtf8String()).isEqualTo("volume-file\n");
            s3.putObject(b -> b.bucket("bucket").key("up/etc/written"), RequestBody.fromString("stays inside"));
            assertThat(api.sh(sandbox, "cat /data/etc/written")).isEqualTo("stays inside");
            assertThat(Files.exists(Path.of("/etc/written"))).isFalse();
        }
        // '..' and empty segments are refused outright (raw requests: SDKs normalize some of them away).
        for (String key : List.of("a/../../x", "..", "a//b", "./a")) {
            var r = api.call("PUT", "/s3/bucket/" + key, "x");
            assertThat(r.status()).as(key).isIn(400, 404);
        }
        api.sh(sandbox, "rm -rf /data/link /data/up /data/etc");
    }

    @Test
    void credentialsAreCheckedLikeTheApisAndTokensKeepToTheirVolumeAndPermissions() {
        try (var s3 = client("sk_" + "0".repeat(43))) {
            assertThatThrownBy(() -> s3.listObjectsV2(b -> b.bucket("bucket"))).isInstanceOf(S3Exception.class)
                    .satisfies(e -> assertThat(((S3Exception) e).statusCode()).isEqualTo(403));
        }
        // A signature made with another secret than the credential is refused.
        try (var forged = S3Client.builder().endpointOverride(URI.create(service.url + "/s3")).forcePathStyle(true).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(service.rootKey, "not-the-key")))
                .httpClientBuilder(Apache5HttpClient.builder()).build()) {
            assertThatThrownBy(() -> forged.listObjectsV2(b -> b.bucket("bucket"))).isInstanceOf(S3Exception.class)
                    .satisfies(e -> assertThat(((S3Exception) e).awsErrorDetails().errorCode()).isEqualTo("SignatureDoesNotMatch"));
        }
        var reader = api.post("/v1/tokens", "{\"scope\": {\"volume\": \"bucket\"}, \"permissions\": [\"volume:read\"]}").get("token").asText();
        api.post("/v1/volumes", "{\"name\": \"elsewhere\", \"sizeMb\": 32}");
        try (var s3 = client(reader)) {
            s3.listObjectsV2(b -> b.bucket("bucket"));
            assertThatThrownBy(() -> s3.putObject(b -> b.bucket("bucket").key("no"), RequestBody.fromString("x"))).isInstanceOf(S3Exception.class)
                    .satisfies(e -> assertThat(((S3Exception) e).statusCode()).isEqualTo(403));
            assertThatThrownBy(() -> s3.listObjectsV2(b -> b.bucket("elsewhere"))).isInstanceOf(S3Exception.class)
                    .satisfies(e -> assertThat(((S3Exception) e).statusCode()).isEqualTo(404));
        } finally {
            api.call("DELETE", "/v1/volumes/elsewhere", null);
        }
        // Another tenant's key sees no such bucket.
        var tenant = api.post("/v1/tenants", "{\"name\": \"s3-other\"}").get("id").asText();
        var otherKey = api.post("/v1/tenants/" + tenant + "/keys", "{}").get("secret").asText();
        try (var s3 = client(otherKey)) {
            assertThatThrownBy(() -> s3.getObjectAsBytes(b -> b.bucket("bucket").key("dir/b.txt"))).isInstanceOf(S3Exception.class)
                    .satisfies(e -> assertThat(((S3Exception) e).awsErrorDetails().errorCode()).isEqualTo("NoSuchBucket"));
        }
    }

    @Test
    void rangedGetsCopiesAndBatchDeletes() {
        api.post("/v1/volumes", "{\"name\": \"source\", \"sizeMb\": 32}");
        try (var s3 = client(service.rootKey)) {
            s3.putObject(b -> b.bucket("bucket").key("r/obj"), RequestBody.fromString("0123456789abcdef"));
            var slice = s3.getObjectAsBytes(b -> b.bucket("bucket").key("r/obj").range("bytes=2-5"));
            assertThat(slice.asUtf8String()).isEqualTo("2345");
            assertThat(slice.response().contentRange()).isEqualTo("bytes 2-5/16");
            assertThat(s3.getObjectAsBytes(b -> b.bucket("bucket").key("r/obj").range("bytes=-3")).asUtf8String()).isEqualTo("def");
            assertThat(s3.getObjectAsBytes(b -> b.bucket("bucket").key("r/obj").range("bytes=14-")).asUtf8String()).isEqualTo("ef");
            assertThatThrownBy(() -> s3.getObjectAsBytes(b -> b.bucket("bucket").key("r/obj").range("bytes=16-"))).isInstanceOf(S3Exception.class)
                    .satisfies(e -> assertThat(((S3Exception) e).awsErrorDetails().errorCode()).isEqualTo("InvalidRange"));
            // A sandbox's write is a new version: the remembered ETag no longer applies.
            assertThat(s3.headObject(b -> b.bucket("bucket").key("r/obj")).eTag()).isEqualTo(quotedMd5("0123456789abcdef"));
            api.sh(sandbox, "printf X >> /data/r/obj");
            assertThat(s3.headObject(b -> b.bucket("bucket").key("r/obj")).eTag()).isEqualTo(quotedMd5("0123456789abcdefX"));

            // CopyObject within a volume and from another volume of the tenant.
            var copied = s3.copyObject(b -> b.sourceBucket("bucket").sourceKey("r/obj").destinationBucket("bucket").destinationKey("r/copy"));
            assertThat(copied.copyObjectResult().eTag()).isEqualTo(quotedMd5("0123456789abcdefX"));
            s3.putObject(b -> b.bucket("source").key("in source"), RequestBody.fromString("from the other volume"));
            s3.copyObject(b -> b.sourceBucket("source").sourceKey("in source").destinationBucket("bucket").destinationKey("r/from source"));
            assertThat(api.sh(sandbox, "cat '/data/r/from source'")).isEqualTo("from the other volume");
            assertThatThrownBy(() -> s3.copyObject(b -> b.sourceBucket("bucket").sourceKey("r/none").destinationBucket("bucket").destinationKey("r/x")))
                    .isInstanceOf(NoSuchKeyException.class);
        }
        // A token of one volume cannot copy out of another: that volume does not exist for it.
        var writer = api.post("/v1/tokens", "{\"scope\": {\"volume\": \"bucket\"}, \"permissions\": [\"volume:read\", \"volume:write\"]}")
                .get("token").asText();
        try (var s3 = client(writer)) {
            assertThatThrownBy(() -> s3.copyObject(b -> b.sourceBucket("source").sourceKey("in source").destinationBucket("bucket").destinationKey("r/y")))
                    .isInstanceOf(S3Exception.class).satisfies(e -> assertThat(((S3Exception) e).statusCode()).isEqualTo(404));
        }
        try (var s3 = client(service.rootKey)) {
            var result = s3.deleteObjects(b -> b.bucket("bucket").delete(d -> d.objects(
                    ObjectIdentifier.builder().key("r/obj").build(), ObjectIdentifier.builder().key("r/copy").build(),
                    ObjectIdentifier.builder().key("r/never there").build(), ObjectIdentifier.builder().key("r/../../x").build())));
            assertThat(result.deleted()).extracting(DeletedObject::key).containsExactly("r/obj", "r/copy", "r/never there");
            assertThat(result.errors()).singleElement().satisfies(e -> {
                assertThat(e.key()).isEqualTo("r/../../x");
                assertThat(e.code()).isEqualTo("InvalidArgument");
            });
            assertThat(s3.listObjectsV2(b -> b.bucket("bucket").prefix("r/")).contents()).extracting(S3Object::key).containsExactly("r/from source");
            s3.deleteObject(b -> b.bucket("bucket").key("r/from source"));
            api.sh(sandbox, "rmdir /data/r"); // directories stay when their last object goes, as on any file system
        } finally {
            api.call("DELETE", "/v1/volumes/source", null);
        }
    }

    private static String quotedMd5(String content) {
        return "\"" + md5Hex(content.getBytes(StandardCharsets.UTF_8)) + "\"";
    }

    private static String md5Hex(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
