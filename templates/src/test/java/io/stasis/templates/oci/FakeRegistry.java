package io.stasis.templates.oci;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A registry of the tests' own on 127.0.0.1 (JDK HttpServer) that serves the read side of the v2
 * API and can misbehave on purpose: demand a Bearer token (from its own token service, optionally
 * behind a user name and password) or Basic credentials, lie about a blob or manifest, redirect
 * blobs to another origin, answer 500, or stall in the middle of a body. It records every request.
 */
final class FakeRegistry implements AutoCloseable {
    static final String TOKEN = "token-for-pulls";

    enum Auth { NONE, BEARER_ANONYMOUS, BEARER_WITH_CREDENTIALS, BASIC }

    record Request(String path, String authorization) {
    }

    private record Manifest(String contentType, byte[] bytes) {
    }

    private final HttpServer server;
    private final Map<String, Manifest> manifests = new ConcurrentHashMap<>(); // "repo@reference"
    private final Map<String, byte[]> blobs = new ConcurrentHashMap<>(); // "sha256:..."
    private final Map<String, byte[]> lies = new ConcurrentHashMap<>(); // what is served instead, by digest or reference
    private final Map<String, String> contentDigests = new ConcurrentHashMap<>(); // lying Docker-Content-Digest headers
    final List<Request> requests = new CopyOnWriteArrayList<>();
    final CountDownLatch release = new CountDownLatch(1);
    volatile Auth auth = Auth.NONE;
    volatile String user = "puller";
    volatile String password = "s3cret";
    volatile String realmOverride;
    volatile boolean redirectBlobs;
    volatile boolean failWith500;
    volatile boolean stallBlobs;

    private FakeRegistry(HttpServer server) {
        this.server = server;
    }

    static FakeRegistry start() throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        var registry = new FakeRegistry(server);
        server.createContext("/", registry::handle);
        server.start();
        return registry;
    }

    /** {@code 127.0.0.1:port}. */
    String host() {
        return "127.0.0.1:" + server.getAddress().getPort();
    }

    void put(String repository, String tag, TestImages.Image image) {
        manifest(repository, tag, image.manifest());
        for (var b : image.blobs()) blobs.put(b.digest().toString(), b.bytes());
    }

    void manifest(String repository, String reference, TestImages.Blob manifest) {
        var m = new Manifest(manifest.mediaType(), manifest.bytes());
        manifests.put(repository + "@" + reference, m);
        manifests.put(repository + "@" + manifest.digest(), m);
    }

    /** Serves {@code content} where {@code digestOrReference} is asked for. */
    void lie(String digestOrReference, byte[] content) {
        lies.put(digestOrReference, content);
    }

    void claimContentDigest(String reference, String digest) {
        contentDigests.put(reference, digest);
    }

    List<Request> requestsFor(String pathPart) {
        return requests.stream().filter(r -> r.path().contains(pathPart)).toList();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getPath();
            String authorization = ex.getRequestHeaders().getFirst("Authorization");
            var uri = ex.getRequestURI();
            requests.add(new Request(uri.getPath() + (uri.getQuery() == null ? "" : "?" + uri.getQuery()), authorization));
            if (path.equals("/token")) {
                token(ex, authorization);
                return;
            }
            if (path.startsWith("/storage/")) {
                blob(ex, path.substring("/storage/".length()));
                return;
            }
            if (!path.startsWith("/v2/")) {
                send(ex, 404, "text/plain", "no".getBytes());
                return;
            }
            if (!authorized(ex, authorization, path)) return;
            if (failWith500) {
                send(ex, 500, "application/json", "{\"errors\":[{\"code\":\"UNKNOWN\",\"message\":\"disk on fire\"}]}".getBytes());
                return;
            }
            int manifestsAt = path.lastIndexOf("/manifests/");
            int blobsAt = path.lastIndexOf("/blobs/");
            if (manifestsAt > 0) manifest(ex, path.substring(4, manifestsAt), path.substring(manifestsAt + "/manifests/".length()));
            else if (blobsAt > 0) {
                String digest = path.substring(blobsAt + "/blobs/".length());
                if (redirectBlobs) {
                    // another origin: localhost rather than 127.0.0.1, as a registry sends clients to its storage
                    ex.getResponseHeaders().add("Location", "http://localhost:" + server.getAddress().getPort() + "/storage/" + digest);
                    send(ex, 307, "text/plain", new byte[0]);
                } else blob(ex, digest);
            } else send(ex, 200, "application/json", "{}".getBytes());
        }
    }

    private boolean authorized(HttpExchange ex, String authorization, String path) throws IOException {
        String realm = realmOverride != null ? realmOverride : "http://" + host() + "/token";
        String repository = path.contains("/manifests/") ? path.substring(4, path.lastIndexOf("/manifests/"))
                : path.contains("/blobs/") ? path.substring(4, path.lastIndexOf("/blobs/")) : "";
        switch (auth) {
            case NONE -> {
                return true;
            }
            case BEARER_ANONYMOUS, BEARER_WITH_CREDENTIALS -> {
                if (("Bearer " + TOKEN).equals(authorization)) return true;
                ex.getResponseHeaders().add("WWW-Authenticate", "Bearer realm=\"" + realm + "\",service=\"fake-registry\",scope=\"repository:"
                        + repository + ":pull\"");
            }
            case BASIC -> {
                if (basic().equals(authorization)) return true;
                ex.getResponseHeaders().add("WWW-Authenticate", "Basic realm=\"fake\"");
            }
        }
        send(ex, 401, "application/json", "{\"errors\":[{\"code\":\"UNAUTHORIZED\",\"message\":\"authentication required\"}]}".getBytes());
        return false;
    }

    private void token(HttpExchange ex, String authorization) throws IOException {
        if (auth == Auth.BEARER_WITH_CREDENTIALS && !basic().equals(authorization)) {
            send(ex, 401, "application/json", "{\"details\":\"bad credentials\"}".getBytes());
            return;
        }
        send(ex, 200, "application/json", ("{\"token\":\"" + TOKEN + "\",\"expires_in\":300}").getBytes());
    }

    private void manifest(HttpExchange ex, String repository, String reference) throws IOException {
        Manifest m = manifests.get(repository + "@" + reference);
        if (m == null) {
            send(ex, 404, "application/json", "{\"errors\":[{\"code\":\"MANIFEST_UNKNOWN\",\"message\":\"manifest unknown\"}]}".getBytes());
            return;
        }
        byte[] body = lies.getOrDefault(reference, m.bytes());
        ex.getResponseHeaders().add("Docker-Content-Digest", contentDigests.getOrDefault(reference, Digest.of(m.bytes()).toString()));
        send(ex, 200, m.contentType(), body);
    }

    private void blob(HttpExchange ex, String digest) throws IOException {
        byte[] blob = blobs.get(digest);
        if (blob == null) {
            send(ex, 404, "application/json", "{\"errors\":[{\"code\":\"BLOB_UNKNOWN\",\"message\":\"blob unknown\"}]}".getBytes());
            return;
        }
        byte[] body = lies.getOrDefault(digest, blob);
        if (stallBlobs) {
            ex.getResponseHeaders().add("Content-Type", "application/octet-stream");
            ex.sendResponseHeaders(200, body.length);
            OutputStream out = ex.getResponseBody();
            out.write(body, 0, body.length / 2);
            out.flush();
            try {
                release.await(60, TimeUnit.SECONDS); // until the test is over
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        send(ex, 200, "application/octet-stream", body);
    }

    private String basic() {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange ex, int status, String contentType, byte[] body) throws IOException {
        ex.getResponseHeaders().add("Content-Type", contentType);
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) ex.getResponseBody().write(body);
    }

    @Override
    public void close() {
        release.countDown();
        server.stop(0);
    }
}
