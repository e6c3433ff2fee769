package io.stasis.server;

import io.stasis.blob.s3.S3ProxyServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** A new bucket of an in-process S3 server as the service's blob store flags; its credentials sit in a file removed on close. */
final class S3StoreFlags implements AutoCloseable {
    final List<String> flags;
    private final Path credentials;

    S3StoreFlags(S3ProxyServer s3) throws IOException {
        var bucket = s3.newBucket();
        credentials = Files.createTempFile("stasis-s3-credentials", ".txt");
        Files.writeString(credentials, bucket.credentials().orElseThrow().accessKeyId() + "\n"
                + bucket.credentials().orElseThrow().secretAccessKey() + "\n");
        flags = List.of("--blob-store", "s3", "--s3-endpoint", s3.endpoint().toString(), "--s3-bucket", bucket.bucket(),
                "--s3-credentials-file", credentials.toString());
    }

    @Override
    public void close() throws IOException {
        Files.deleteIfExists(credentials);
    }
}
