package io.stasis.testkit;

import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Debian's {@code docker-registry} (the CNCF distribution registry) run for a test on
 * 127.0.0.1:<free port> with filesystem storage in the test's directory, and the push side of the
 * v2 API the tests fill it with (monolithic blob uploads, then manifests). The only class that
 * starts the registry; {@link #close()} stops it (killing it if it lingers).
 */
public final class DockerRegistry implements AutoCloseable {
    public static final Path BINARY = Path.of("/usr/bin/docker-registry");
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private final Process process;
    private final int port;
    private final Path log;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private DockerRegistry(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    public static boolean installed() {
        return Files.isExecutable(BINARY);
    }

    public static DockerRegistry start(Path dir) throws IOException, InterruptedException {
        int port;
        try (var probe = new ServerSocket(0, 0, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        Path config = dir.resolve("config.yml");
        Files.writeString(config, """
                version: 0.1
                log:
                  level: warn
                  accesslog:
                    disabled: true
                storage:
                  filesystem:
                    rootdirectory: %s
                  maintenance:
                    uploadpurging:
                      enabled: false
                http:
                  addr: 127.0.0.1:%d
                  secret: %s
                """.formatted(Files.createDirectories(dir.resolve("data")), port, UUID.randomUUID()));
        Path log = dir.resolve("registry.log");
        var builder = new ProcessBuilder(BINARY.toString(), "serve", config.toString()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        var registry = new DockerRegistry(ToolRunner.start(builder), port, log);
        try {
            registry.awaitReady();
            return registry;
        } catch (IOException | InterruptedException | RuntimeException e) {
            registry.close();
            throw e;
        }
    }

    /** {@code 127.0.0.1:port}. */
    public String host() {
        return "127.0.0.1:" + port;
    }

    private void awaitReady() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
        while (true) {
            if (!process.isAlive()) throw new IllegalStateException("docker-registry exited " + process.exitValue() + ": " + Files.readString(log));
            try {
                if (get("/v2/").statusCode() == 200) return;
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline)
                throw new IllegalStateException("docker-registry did not answer on " + host() + " within " + START_TIMEOUT + ": " + Files.readString(log));
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
        }
    }

    /** Uploads a blob in one PUT (POST for an upload URL, then PUT with the digest); returns its digest. */
    public String pushBlob(String repository, byte[] blob) throws IOException, InterruptedException {
        String digest = digest(blob);
        var start = send(HttpRequest.newBuilder(uri("/v2/" + repository + "/blobs/uploads/")).POST(HttpRequest.BodyPublishers.noBody()));
        expect(start, 202, "start an upload of " + digest);
        URI location = uri("/").resolve(start.headers().firstValue("Location").orElseThrow());
        String sep = location.getQuery() == null ? "?" : "&";
        var put = send(HttpRequest.newBuilder(URI.create(location + sep + "digest=" + digest))
                .header("Content-Type", "application/octet-stream").PUT(HttpRequest.BodyPublishers.ofByteArray(blob)));
        expect(put, 201, "upload " + digest);
        return digest;
    }

    /** Puts a manifest or index of {@code mediaType} under {@code reference} (a tag or its digest). */
    public void pushManifest(String repository, String reference, String mediaType, byte[] manifest) throws IOException, InterruptedException {
        var put = send(HttpRequest.newBuilder(uri("/v2/" + repository + "/manifests/" + reference)).header("Content-Type", mediaType)
                .PUT(HttpRequest.BodyPublishers.ofByteArray(manifest)));
        expect(put, 201, "put manifest " + reference);
    }

    /** {@code sha256:} and the hex SHA-256 of {@code bytes}, as the registry names a blob. */
    public static String digest(byte[] bytes) {
        try {
            return "sha256:" + java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(uri(path)).GET());
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return http.send(request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        return URI.create("http://" + host() + path);
    }

    private static void expect(HttpResponse<String> response, int status, String what) {
        if (response.statusCode() != status)
            throw new IllegalStateException(what + ": HTTP " + response.statusCode() + " " + response.body());
    }

    @Override
    public void close() {
        http.close();
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
