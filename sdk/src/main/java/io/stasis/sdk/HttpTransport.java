package io.stasis.sdk;

import com.fasterxml.jackson.databind.JavaType;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;

/**
 * Sends one API call and hands back a successful response, or throws the mapped exception.
 * Every body is received as a stream so that file downloads and exec event streams are never
 * buffered whole; JSON responses are read fully and parsed here.
 */
final class HttpTransport {
    static final String REQUEST_ID = "X-Request-Id";
    private static final String USER_AGENT = "stasis-java-sdk/0.1";
    private static final int MAX_ERROR_BODY = 1 << 20;
    private static final Set<String> IDEMPOTENT_METHODS = Set.of("GET", "HEAD", "PUT", "DELETE");
    /** Statuses that say "not now" rather than "no": a proxy without a backend, a busy host, a rate limit. */
    private static final Set<Integer> RETRIED_STATUSES = Set.of(429, 502, 503, 504);

    private final String baseUrl;
    private final String authorization;
    private final HttpClient http;
    private final Duration requestTimeout;
    private final Duration operationTimeout;
    private final RetryPolicy retries;

    HttpTransport(String baseUrl, String apiKey, HttpClient http, Duration requestTimeout, Duration operationTimeout,
                  RetryPolicy retries) {
        this.baseUrl = baseUrl;
        this.authorization = apiKey == null ? null : "Bearer " + apiKey;
        this.http = http;
        this.requestTimeout = requestTimeout;
        this.operationTimeout = operationTimeout;
        this.retries = retries;
    }

    String baseUrl() {
        return baseUrl;
    }

    Duration requestTimeout() {
        return requestTimeout;
    }

    /**
     * The wait for calls whose work takes as long as it takes on the host (create, the lifecycle
     * actions, checkpoint, fork): the longer of the two timeouts, or none when either is none.
     */
    Duration operationTimeout() {
        if (requestTimeout == null || operationTimeout == null) return null;
        return operationTimeout.compareTo(requestTimeout) > 0 ? operationTimeout : requestTimeout;
    }

    /**
     * One call. {@code timeout} bounds the wait for the response headers (null: none, for uploads
     * and for commands that may run long); the body is then read at the caller's pace.
     * {@code retry} says whether a failed attempt may be repeated (null: by the method, see
     * {@link #retryable()}).
     */
    record Call(String method, String path, Query query, BodyPublisher body, String contentType, String accept,
                Duration timeout, boolean authenticated, Map<String, String> headers, Boolean retry) {
        Call {
            headers = Map.copyOf(headers);
        }

        static Call of(String method, String path) {
            return new Call(method, path, Query.of(), null, null, "application/json", null, true, Map.of(), null);
        }

        Call query(Query q) {
            return new Call(method, path, q, body, contentType, accept, timeout, authenticated, headers, retry);
        }

        Call body(BodyPublisher b, String type) {
            return new Call(method, path, query, b, type, accept, timeout, authenticated, headers, retry);
        }

        Call accept(String type) {
            return new Call(method, path, query, body, contentType, type, timeout, authenticated, headers, retry);
        }

        Call timeout(Duration t) {
            return new Call(method, path, query, body, contentType, accept, t, authenticated, headers, retry);
        }

        Call anonymous() {
            return new Call(method, path, query, body, contentType, accept, timeout, false, headers, retry);
        }

        /** A POST the API defines as idempotent (the lifecycle actions): retried like a GET. */
        Call idempotent() {
            return new Call(method, path, query, body, contentType, accept, timeout, authenticated, headers, true);
        }

        /** Sent once whatever the method, e.g. an upload whose body can be read only once. */
        Call once() {
            return new Call(method, path, query, body, contentType, accept, timeout, authenticated, headers, false);
        }

        /** One more request header (null value: left out), e.g. {@code Last-Event-ID} when a stream resumes. */
        Call header(String name, String value) {
            if (value == null) return this;
            var more = new LinkedHashMap<>(headers);
            more.put(name, value);
            return new Call(method, path, query, body, contentType, accept, timeout, authenticated, more, retry);
        }

        String target() {
            return path + query.toQueryString();
        }

        /**
         * GET, HEAD, PUT and DELETE are, unless marked {@link #once()}; a POST only when marked
         * {@link #idempotent()}. Event streams never are: they reconnect on their own.
         */
        boolean retryable() {
            if (retry != null) return retry;
            return IDEMPOTENT_METHODS.contains(method) && !"text/event-stream".equals(accept);
        }
    }

    Call call(String method, String path) {
        return Call.of(method, path).timeout(requestTimeout);
    }

    Call jsonCall(String method, String path, Object body) {
        byte[] json;
        try {
            json = Wire.MAPPER.writeValueAsBytes(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return call(method, path).body(HttpRequest.BodyPublishers.ofByteArray(json), "application/json");
    }

    /** Sends the call, returns the parsed JSON body. */
    <T> T json(Call call, Class<T> type) {
        return json(call, Wire.MAPPER.constructType(type));
    }

    <T> T json(Call call, JavaType type) {
        HttpResponse<InputStream> response = send(call);
        byte[] body = readAll(call, response);
        try {
            return Wire.MAPPER.readValue(body, type);
        } catch (IOException e) {
            throw new StasisClientException("cannot read the response of " + call.method() + " " + call.path()
                    + " as " + type.getGenericSignature() + ": " + e.getMessage(), e);
        }
    }

    <T> Page.Body<T> page(Call call, Class<T> itemType) {
        return json(call, Wire.MAPPER.getTypeFactory().constructParametricType(Page.Body.class, itemType));
    }

    /** Sends the call, returns the body as UTF-8 text. */
    String text(Call call) {
        HttpResponse<InputStream> response = send(call);
        return new String(readAll(call, response), StandardCharsets.UTF_8);
    }

    /** Sends the call and discards the (usually empty) body. */
    void discard(Call call) {
        HttpResponse<InputStream> response = send(call);
        readAll(call, response);
    }

    /**
     * Sends the call and returns the successful response with its body unread: the caller must
     * read it to the end or close it. A {@linkplain Call#retryable() retryable} call is repeated
     * as the {@link RetryPolicy} says when the connection fails or the server answers 429, 502,
     * 503 or 504; a response that timed out is not repeated (its time is spent). Any call is repeated
     * after a 429 {@code rate_limited}, which the server answers before doing anything, after the
     * wait it names to the millisecond, unless it is sent {@linkplain Call#once() once} by design.
     */
    HttpResponse<InputStream> send(Call call) {
        long start = System.nanoTime();
        var earlier = new ArrayList<StasisClientException>();
        for (int attempt = 1; ; attempt++) {
            StasisClientException failure;
            Duration retryAfter = null;
            try {
                HttpResponse<InputStream> response = exchange(call);
                if (response.statusCode() / 100 == 2) return response;
                failure = ApiErrors.fromResponse(response.statusCode(), readErrorBody(response),
                        header(response, REQUEST_ID));
                if (!RETRIED_STATUSES.contains(response.statusCode())) throw failure;
                retryAfter = failure instanceof RateLimitedException limited
                        ? limited.retryAfter().orElseGet(() -> retryAfter(header(response, "Retry-After")))
                        : retryAfter(header(response, "Retry-After"));
            } catch (StasisTimeoutException e) {
                throw e;
            } catch (StasisConnectionException e) {
                failure = e;
            }
            // A call sent once by design (an upload from a stream, which cannot be read twice) stays so.
            boolean again = call.retryable() || (failure instanceof RateLimitedException && !Boolean.FALSE.equals(call.retry()));
            RetryPolicy policy = again ? retries : RetryPolicy.none();
            Duration pause = retryAfter != null ? retryAfter : jitter(policy.backoff(attempt));
            long deadline = start + policy.maxElapsed().toNanos();
            if (attempt >= policy.maxAttempts() || System.nanoTime() + pause.toNanos() > deadline) {
                earlier.forEach(failure::addSuppressed);
                throw failure;
            }
            earlier.add(failure);
            SdkLog.retry(call.method(), call.path(), attempt, pause.toMillis(), failure.getMessage());
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                var interrupted = new StasisClientException(where("interrupted while retrying", call), e);
                earlier.forEach(interrupted::addSuppressed);
                throw interrupted;
            }
        }
    }

    /** One attempt: the response of any status, or a connection failure. */
    private HttpResponse<InputStream> exchange(Call call) {
        URI uri = URI.create(baseUrl + call.target());
        var request = HttpRequest.newBuilder(uri)
                .method(call.method(), call.body() == null ? HttpRequest.BodyPublishers.noBody() : call.body())
                .header("Accept", call.accept())
                .header("User-Agent", USER_AGENT);
        if (call.contentType() != null) request.header("Content-Type", call.contentType());
        if (call.authenticated() && authorization != null) request.header("Authorization", authorization);
        if (call.timeout() != null) request.timeout(call.timeout());
        call.headers().forEach(request::header);
        long start = System.nanoTime();
        HttpResponse<InputStream> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (HttpConnectTimeoutException e) {
            throw new StasisConnectionException(where("cannot connect to", call) + ": connect timed out", e);
        } catch (HttpTimeoutException e) {
            throw new StasisTimeoutException(where("no response from", call) + " within " + call.timeout(), e);
        } catch (ConnectException e) {
            // The JDK often leaves a refused connection without any message.
            String why = hasMessage(e) ? reason(e) : "connection refused";
            throw new StasisConnectionException(where("cannot connect to", call) + ": " + why, e);
        } catch (IOException e) {
            throw new StasisConnectionException(where("request failed to", call) + ": " + reason(e), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StasisClientException(where("interrupted while calling", call), e);
        }
        SdkLog.call(call.method(), call.path(), response.statusCode(),
                (System.nanoTime() - start) / 1_000_000, header(response, REQUEST_ID));
        return response;
    }

    /** Between half and all of {@code pause}, so that many clients do not retry in lockstep. */
    private static Duration jitter(Duration pause) {
        long nanos = pause.toNanos();
        if (nanos <= 1) return pause;
        return Duration.ofNanos(nanos / 2 + ThreadLocalRandom.current().nextLong(nanos - nanos / 2));
    }

    /** A {@code Retry-After} of delay-seconds or an HTTP date; null when absent or unreadable. */
    static Duration retryAfter(String value) {
        if (value == null || value.isBlank()) return null;
        String v = value.strip();
        try {
            long seconds = Long.parseLong(v);
            return seconds < 0 ? null : Duration.ofSeconds(seconds);
        } catch (NumberFormatException e) {
            try {
                Instant at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
                Duration left = Duration.between(Instant.now(), at);
                return left.isNegative() ? Duration.ZERO : left;
            } catch (DateTimeParseException notADate) {
                return null;
            }
        }
    }

    /**
     * Opens a WebSocket on the same server with the same key. A refused upgrade (401, 404, ...)
     * becomes the mapped API error, as for any other call; {@code timeout} bounds the handshake
     * (null: none).
     */
    WebSocket webSocket(String path, Query query, WebSocket.Listener listener, Duration timeout) {
        URI uri = URI.create(baseUrl.replaceFirst("^http", "ws") + path + query.toQueryString());
        var builder = http.newWebSocketBuilder().header("User-Agent", USER_AGENT);
        if (authorization != null) builder.header("Authorization", authorization);
        var call = Call.of("GET", path).timeout(timeout);
        CompletableFuture<WebSocket> opening = builder.buildAsync(uri, listener);
        try {
            return timeout == null ? opening.get() : opening.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            opening.cancel(true);
            throw new StasisTimeoutException(where("no WebSocket handshake from", call) + " within " + timeout, e);
        } catch (InterruptedException e) {
            opening.cancel(true);
            Thread.currentThread().interrupt();
            throw new StasisClientException(where("interrupted while calling", call), e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof WebSocketHandshakeException refused) throw refusedUpgrade(refused);
            throw new StasisConnectionException(where("cannot open a WebSocket to", call) + ": " + reason(e.getCause()),
                    e.getCause());
        }
    }

    private static StasisApiException refusedUpgrade(WebSocketHandshakeException e) {
        HttpResponse<?> response = e.getResponse();
        byte[] body = switch (response.body()) {
            case String text -> text.getBytes(StandardCharsets.UTF_8);
            case byte[] bytes -> bytes;
            case null, default -> new byte[0];
        };
        return ApiErrors.fromResponse(response.statusCode(), body, header(response, REQUEST_ID));
    }

    /** Reads a success body completely, mapping a broken connection to a connection error. */
    byte[] readAll(Call call, HttpResponse<InputStream> response) {
        try (InputStream in = response.body()) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw brokenStream(call, e);
        }
    }

    StasisConnectionException brokenStream(Call call, IOException e) {
        return new StasisConnectionException(where("connection broke while reading the response from", call)
                + ": " + reason(e), e);
    }

    private static byte[] readErrorBody(HttpResponse<InputStream> response) {
        try (InputStream in = response.body()) {
            return in.readNBytes(MAX_ERROR_BODY);
        } catch (IOException e) {
            return new byte[0]; // the status alone still says what went wrong
        }
    }

    private String where(String what, Call call) {
        return what + " " + baseUrl + " (" + call.method() + " " + call.path() + ")";
    }

    /** The most telling message in an exception chain: the JDK often wraps the useful one. */
    static String reason(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) return t.getMessage();
        }
        return e.getClass().getSimpleName();
    }

    private static boolean hasMessage(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) return true;
        }
        return false;
    }

    static String header(HttpResponse<?> response, String name) {
        List<String> values = response.headers().allValues(name);
        return values.isEmpty() ? null : values.getFirst();
    }
}
