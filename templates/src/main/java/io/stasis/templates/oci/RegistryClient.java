package io.stasis.templates.oci;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pulls an image from a registry over the Docker Registry HTTP API v2 (the OCI distribution API):
 * the manifest by tag or digest (an index or manifest list is followed to the manifest for the
 * platform, linux/amd64 by default), then the config and every layer blob into a
 * {@link BlobSpool}, each verified against its digest and size, and the manifest too (against the
 * digest pulled by, else the registry's {@code Docker-Content-Digest}). The result is the same
 * {@link OciImage} as {@link ImageArchive} gives.
 *
 * <p>Access: anonymous; the Bearer token flow ({@code WWW-Authenticate: Bearer realm=...,
 * service=..., scope=...}, credentials sent to the token service when given); HTTP Basic when the
 * registry asks for it and credentials are given. Credentials and tokens go only over https, or to
 * a loopback registry, or with {@code insecure}; redirects (blob storage) are followed without
 * them. Transport: https, except plain http for {@code localhost}/{@code 127.0.0.1}/{@code [::1]}
 * registries or with {@code insecure}.
 *
 * <p>Failures are {@link ImageException}s: 404 is {@code not_found} ("image not found"), 401/403
 * {@code unauthorized}, 429/5xx, timeouts and broken connections {@code unavailable} (the timeout
 * bounds the wait for each response's headers, and each silence while a body streams), a
 * mismatch {@code digest_mismatch} naming the blob. Nothing stays spooled after a failure.
 * Thread-safe; close it to release its connections and watchdog thread.
 */
public final class RegistryClient implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RegistryClient.class);
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
    static final String MANIFEST_ACCEPT = String.join(", ", Descriptor.OCI_INDEX, Descriptor.OCI_MANIFEST, Descriptor.DOCKER_LIST,
            Descriptor.DOCKER_MANIFEST);
    private static final int MAX_REDIRECTS = 5;
    private static final int MAX_TOKEN_BYTES = 1 << 20;
    private static final int MAX_ERROR_BYTES = 4096;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path spoolParent;
    private final long limit;
    private final Platform platform;
    private final Duration timeout;
    private final HttpClient http;
    private final ScheduledExecutorService watchdog;

    /** Spools to the JDK's temporary directory, up to {@link BlobSpool#DEFAULT_LIMIT}, linux/amd64, {@link #DEFAULT_TIMEOUT}. */
    public RegistryClient() {
        this(null, BlobSpool.DEFAULT_LIMIT, Platform.LINUX_AMD64, DEFAULT_TIMEOUT);
    }

    /**
     * @param spoolParent where spool directories are made (null: the JDK's temporary directory)
     * @param limit       the most bytes an image's blobs may hold in all
     * @param platform    the image wanted from a multi-platform index
     * @param timeout     for connecting, for each response's headers, and for each silence of a body
     */
    public RegistryClient(Path spoolParent, long limit, Platform platform, Duration timeout) {
        if (limit <= 0) throw new IllegalArgumentException("limit must be > 0, was " + limit);
        if (timeout.isNegative() || timeout.isZero()) throw new IllegalArgumentException("timeout must be positive, was " + timeout);
        this.spoolParent = spoolParent;
        this.limit = limit;
        this.platform = Objects.requireNonNull(platform);
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout)
                .followRedirects(HttpClient.Redirect.NEVER).build();
        this.watchdog = Executors.newSingleThreadScheduledExecutor(Thread.ofPlatform().daemon().name("registry-watchdog").factory());
    }

    /** {@link #pull(ImageReference, Optional, boolean)} anonymously or with credentials, over https unless the registry is loopback. */
    public OciImage pull(ImageReference ref, Optional<RegistryCredentials> credentials) {
        return pull(ref, credentials, false);
    }

    /**
     * Pulls {@code ref}; the caller closes the image.
     *
     * @param insecure allow plain http (and credentials over it) to a registry that is not on loopback
     */
    public OciImage pull(ImageReference ref, Optional<RegistryCredentials> credentials, boolean insecure) {
        long start = System.nanoTime();
        var session = new Session(ref, credentials, insecure);
        BlobSpool spool = BlobSpool.create(spoolParent, limit);
        try {
            var top = session.manifest(ref.reference(), ref.digest(), -1);
            var doc = ImageJson.document(top.body(), top.contentType(), "manifest " + ref);
            var blobs = new ImageAssembly.Blobs() {
                @Override
                public byte[] manifest(Descriptor d) {
                    return session.manifest(d.digest().toString(), Optional.of(d.digest()), d.size()).body();
                }

                @Override
                public SpooledBlob blob(Descriptor d, String role) {
                    return session.blob(d, role, spool);
                }
            };
            OciImage image = ImageAssembly.assemble(ref.toString(), doc, Optional.of(top.digest()), blobs, platform, spool);
            log.atInfo().addKeyValue("image", ref).addKeyValue("manifest", image.manifestDigest().map(Digest::toString).orElse(""))
                    .addKeyValue("layers", image.layers().size()).addKeyValue("bytes", image.compressedSize())
                    .addKeyValue("ms", (System.nanoTime() - start) / 1_000_000).log("image pulled");
            return image;
        } catch (RuntimeException | Error e) {
            spool.close();
            throw e;
        }
    }

    @Override
    public void close() {
        watchdog.shutdownNow();
        http.close();
    }

    private record Fetched(byte[] body, String contentType, Digest digest) {
    }

    /** One pull: where the registry is, how to reach it, and the authorization earned so far. */
    private final class Session {
        private final ImageReference ref;
        private final Optional<RegistryCredentials> credentials;
        private final boolean insecure;
        private final URI base;
        private String authorization;

        Session(ImageReference ref, Optional<RegistryCredentials> credentials, boolean insecure) {
            this.ref = ref;
            this.credentials = credentials;
            this.insecure = insecure;
            this.base = ref.apiBase(insecure);
        }

        Fetched manifest(String reference, Optional<Digest> expected, long expectedSize) {
            String what = "manifest " + (reference.startsWith("sha256:") ? reference : ref.toString());
            HttpResponse<InputStream> response = send(api("manifests/" + reference), MANIFEST_ACCEPT, what);
            byte[] body;
            try (InputStream in = guarded(response.body(), what)) {
                body = in.readNBytes(ImageJson.MAX_DOCUMENT_BYTES + 1);
            } catch (IOException e) {
                throw unavailable(what, "reading it failed: " + e.getMessage(), e);
            }
            if (body.length > ImageJson.MAX_DOCUMENT_BYTES)
                throw ImageException.tooLarge(what, "over the " + ImageJson.MAX_DOCUMENT_BYTES + " bytes a manifest may have");
            Digest actual = Digest.of(body);
            Optional<Digest> claimed = expected.isPresent() ? expected
                    : response.headers().firstValue("Docker-Content-Digest").filter(h -> h.startsWith("sha256:")).map(h -> Digest.parse(h, what));
            if (claimed.isPresent() && !claimed.get().equals(actual))
                throw new ImageException(ImageException.Reason.DIGEST_MISMATCH, claimed.get().toString(), what + ": its content hashes to "
                        + actual + ", not " + claimed.get() + (expected.isPresent() ? "" : " as the registry's Docker-Content-Digest says"));
            if (expectedSize >= 0 && body.length != expectedSize)
                throw new ImageException(ImageException.Reason.DIGEST_MISMATCH, actual.toString(),
                        what + ": " + body.length + " bytes where " + expectedSize + " were declared");
            return new Fetched(body, response.headers().firstValue("Content-Type").orElse(null), actual);
        }

        SpooledBlob blob(Descriptor d, String role, BlobSpool spool) {
            String what = role + " " + d.digest();
            HttpResponse<InputStream> response = send(api("blobs/" + d.digest()), "*/*", what);
            long length = response.headers().firstValueAsLong("Content-Length").orElse(-1);
            try (InputStream in = guarded(response.body(), what)) {
                if (length > d.size())
                    throw new ImageException(ImageException.Reason.DIGEST_MISMATCH, d.digest().toString(),
                            what + ": the registry sends " + length + " bytes where " + d.size() + " were declared");
                return spool.write(in, what, d.size()).verify(d.digest(), d.size(), role);
            } catch (IOException e) {
                throw unavailable(what, "closing the download failed: " + e.getMessage(), e);
            }
        }

        private URI api(String path) {
            return base.resolve("/v2/" + ref.repository() + "/" + path);
        }

        /** A GET that succeeded (200), authenticating once if challenged; anything else is the matching ImageException. */
        private HttpResponse<InputStream> send(URI uri, String accept, String what) {
            for (int attempt = 0; ; attempt++) {
                HttpResponse<InputStream> response = exchange(uri, accept, authorization, what);
                int status = response.statusCode();
                if (status == 200) return response;
                String detail = errorDetail(response);
                if (status == 401 && attempt == 0) {
                    authorization = authenticate(response.headers().firstValue("WWW-Authenticate"), what);
                    continue;
                }
                throw switch (status) {
                    case 401, 403 -> new ImageException(ImageException.Reason.UNAUTHORIZED, ref.toString(), what + ": the registry refused access"
                            + (credentials.isPresent() ? " with the credentials given" : " without credentials") + " (HTTP " + status + detail + ")");
                    case 404 -> new ImageException(ImageException.Reason.NOT_FOUND, ref.toString(),
                            (what.startsWith("manifest") ? "image not found: " + ref : what + " not found in " + ref) + " (HTTP 404" + detail + ")");
                    default -> new ImageException(ImageException.Reason.UNAVAILABLE, ref.toString(),
                            what + ": the registry answered HTTP " + status + detail);
                };
            }
        }

        /** One GET, redirects followed by hand: credentials never go to another host, and never from https down to http. */
        private HttpResponse<InputStream> exchange(URI uri, String accept, String auth, String what) {
            URI current = uri;
            for (int hop = 0; hop <= MAX_REDIRECTS; hop++) {
                checkScheme(current, what);
                boolean home = sameOrigin(current, base);
                var request = HttpRequest.newBuilder(current).timeout(timeout).header("Accept", accept).GET();
                if (home && auth != null) request.header("Authorization", auth);
                HttpResponse<InputStream> response = call(request.build(), what);
                int status = response.statusCode();
                if (status != 301 && status != 302 && status != 303 && status != 307 && status != 308) return response;
                closeQuietly(response.body());
                String location = response.headers().firstValue("Location")
                        .orElseThrow(() -> unavailable(what, "a redirect (HTTP " + status + ") without a Location", null));
                URI next = current.resolve(location);
                if (current.getScheme().equals("https") && !next.getScheme().equals("https") && !insecure)
                    throw unavailable(what, "a redirect from https down to " + next.getScheme() + " (" + next.getHost() + ")", null);
                current = next;
            }
            throw unavailable(what, "more than " + MAX_REDIRECTS + " redirects", null);
        }

        private String authenticate(Optional<String> header, String what) {
            var challenge = header.flatMap(WwwAuthenticate::parse)
                    .orElseThrow(() -> new ImageException(ImageException.Reason.UNAUTHORIZED, ref.toString(),
                            what + ": the registry answered 401 without a WWW-Authenticate challenge"));
            return switch (challenge.scheme()) {
                case "bearer" -> "Bearer " + token(challenge, what);
                case "basic" -> credentials.map(RegistryCredentials::basicAuthorization)
                        .filter(b -> mayCarryCredentials(base))
                        .orElseThrow(() -> new ImageException(ImageException.Reason.UNAUTHORIZED, ref.toString(), what
                                + (credentials.isEmpty() ? ": the registry wants a user name and password (Basic)"
                                : ": credentials would go over plain http; pass insecure to allow it")));
                default -> throw new ImageException(ImageException.Reason.UNAUTHORIZED, ref.toString(),
                        what + ": the registry wants '" + challenge.scheme() + "' authentication, which is not supported");
            };
        }

        /** The Bearer token flow: GET realm?service=...&scope=..., with Basic credentials when given. */
        private String token(WwwAuthenticate challenge, String what) {
            String realm = challenge.param("realm").orElseThrow(() -> new ImageException(ImageException.Reason.UNAUTHORIZED, ref.toString(),
                    what + ": a Bearer challenge without a realm"));
            URI realmUri;
            try {
                realmUri = URI.create(realm);
            } catch (IllegalArgumentException e) {
                throw new ImageException(ImageException.Reason.UNAUTHORIZED, ref.toString(), what + ": the token realm '" + realm + "' is no URL");
            }
            if (!realmUri.isAbsolute() || realmUri.getHost() == null)
                throw new ImageException(ImageException.Reason.UNAUTHORIZED, ref.toString(), what + ": the token realm '" + realm + "' is no URL");
            checkScheme(realmUri, "the token service " + realmUri.getHost());
            var query = new StringBuilder();
            challenge.param("service").ifPresent(s -> query.append("service=").append(encode(s)));
            String scope = challenge.param("scope").orElse("repository:" + ref.repository() + ":pull");
            query.append(query.isEmpty() ? "" : "&").append("scope=").append(encode(scope));
            URI uri = URI.create(realm + (realm.contains("?") ? "&" : "?") + query);
            var request = HttpRequest.newBuilder(uri).timeout(timeout).header("Accept", "application/json").GET();
            if (credentials.isPresent() && mayCarryCredentials(uri)) request.header("Authorization", credentials.get().basicAuthorization());
            HttpResponse<InputStream> response = call(request.build(), "the token service " + uri.getHost());
            byte[] body;
            try (InputStream in = guarded(response.body(), "the token service")) {
                body = in.readNBytes(MAX_TOKEN_BYTES + 1);
            } catch (IOException e) {
                throw unavailable(what, "reading the token failed: " + e.getMessage(), e);
            }
            if (response.statusCode() == 401 || response.statusCode() == 403)
                throw new ImageException(ImageException.Reason.UNAUTHORIZED, ref.toString(), what + ": the token service " + uri.getHost()
                        + " refused " + (credentials.isPresent() ? "the credentials given" : "anonymous access") + " (HTTP " + response.statusCode() + ")");
            if (response.statusCode() != 200 || body.length > MAX_TOKEN_BYTES)
                throw unavailable(what, "the token service " + uri.getHost() + " answered HTTP " + response.statusCode(), null);
            try {
                JsonNode json = JSON.readTree(body);
                JsonNode token = json.hasNonNull("token") ? json.get("token") : json.get("access_token");
                if (token == null || !token.isTextual() || token.asText().isEmpty()) throw new IOException("no token in the answer");
                return token.asText();
            } catch (IOException e) {
                throw unavailable(what, "the token service " + uri.getHost() + " gave no token: " + e.getMessage(), e);
            }
        }

        private void checkScheme(URI uri, String what) {
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
            if (scheme.equals("https")) return;
            if (scheme.equals("http") && (insecure || isLoopback(uri))) return;
            throw new ImageException(ImageException.Reason.UNAVAILABLE, ref.toString(), what + ": refusing " + uri.getScheme() + "://"
                    + uri.getHost() + " (https only, except for a loopback registry or with insecure)");
        }

        private boolean mayCarryCredentials(URI uri) {
            return "https".equalsIgnoreCase(uri.getScheme()) || insecure || isLoopback(uri);
        }

        private HttpResponse<InputStream> call(HttpRequest request, String what) {
            try {
                return http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            } catch (IOException e) {
                throw unavailable(what, "cannot reach " + request.uri().getHost() + ": " + e, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw unavailable(what, "interrupted", e);
            }
        }

        /** A bit of a failed answer for the message: a registry's first error code and message, if it sent JSON ones. */
        private String errorDetail(HttpResponse<InputStream> response) {
            try (InputStream in = response.body()) {
                byte[] body = in.readNBytes(MAX_ERROR_BYTES);
                JsonNode first = JSON.readTree(body).path("errors").path(0);
                if (first.isMissingNode()) return "";
                return ", " + first.path("code").asText("") + (first.hasNonNull("message") ? ": " + first.get("message").asText() : "");
            } catch (IOException | RuntimeException e) {
                return "";
            }
        }

        private ImageException unavailable(String what, String problem, Throwable cause) {
            return new ImageException(ImageException.Reason.UNAVAILABLE, ref.toString(), what + ": " + problem, cause);
        }

        /** The body, closed by the watchdog when it is silent longer than the timeout; its failures become ImageExceptions. */
        private InputStream guarded(InputStream body, String what) {
            return new Watched(body, what, this);
        }
    }

    /** A response body that fails (and is closed) when no byte arrives for longer than the timeout. */
    private final class Watched extends FilterInputStream {
        private final String what;
        private final Session session;
        private final ScheduledFuture<?> check;
        private volatile long lastProgress = System.nanoTime();
        private volatile boolean timedOut;

        Watched(InputStream in, String what, Session session) {
            super(in);
            this.what = what;
            this.session = session;
            long period = Math.max(50, Math.min(1000, timeout.toMillis() / 4));
            this.check = watchdog.scheduleAtFixedRate(this::checkIdle, period, period, TimeUnit.MILLISECONDS);
        }

        private void checkIdle() {
            if (System.nanoTime() - lastProgress > timeout.toNanos()) {
                timedOut = true;
                check.cancel(false);
                closeQuietly(in);
            }
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) == 1 ? one[0] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            try {
                int n = in.read(b, off, len);
                lastProgress = System.nanoTime();
                if (timedOut) throw silent();
                return n;
            } catch (IOException e) {
                if (timedOut) throw silent();
                throw session.unavailable(what, "the connection broke: " + e.getMessage(), e);
            }
        }

        private ImageException silent() {
            return session.unavailable(what, "no data for " + timeout.toSeconds() + " s", null);
        }

        @Override
        public void close() throws IOException {
            check.cancel(false);
            in.close();
        }
    }

    private static boolean sameOrigin(URI a, URI b) {
        return a.getScheme().equalsIgnoreCase(b.getScheme()) && Objects.equals(a.getHost(), b.getHost()) && port(a) == port(b);
    }

    private static int port(URI u) {
        return u.getPort() >= 0 ? u.getPort() : u.getScheme().equalsIgnoreCase("https") ? 443 : 80;
    }

    private static boolean isLoopback(URI uri) {
        String host = uri.getHost() == null ? "" : uri.getHost();
        return host.equals("localhost") || host.matches("127\\.[0-9]+\\.[0-9]+\\.[0-9]+") || host.equals("[::1]") || host.equals("::1");
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static void closeQuietly(InputStream in) {
        try {
            in.close();
        } catch (IOException | RuntimeException ignored) {
            // the connection is dropped either way
        }
    }
}
