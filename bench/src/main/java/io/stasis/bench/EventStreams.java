package io.stasis.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Server-Sent Event streams of the API (a process's output followed, a file watch), opened
 * asynchronously and parsed as their bytes arrive, on the HTTP client's own selector thread: no
 * thread per stream, so a thousand can be held at once. The streams are spread over a few
 * HTTP/1.1 clients set up as the SDK sets up its own (each stream is one connection).
 */
final class EventStreams implements AutoCloseable {
    private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(10);

    /** Receives each event of a stream on the client's thread; must not block. */
    @FunctionalInterface
    interface Listener {
        /**
         * @param type     the {@code event:} field ({@code message} when there was none)
         * @param data     the {@code data:} lines joined with {@code \n}
         * @param received {@link System#nanoTime()} when the bytes completing the event arrived
         */
        void event(String type, String data, long received);
    }

    /** The service answered with something other than a stream (an error, a route it lacks). */
    static final class Refused extends IllegalStateException {
        private final int status;

        Refused(String what, int status, String body) {
            super(what + " answered " + status + " instead of an event stream: " + body);
            this.status = status;
        }

        int status() {
            return status;
        }
    }

    private final String baseUrl;
    private final String apiKey;
    private final List<HttpClient> clients = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();

    /**
     * @param clients how many HTTP clients to spread the streams over (each has one selector thread
     *                that reads and parses the bytes of its streams)
     */
    EventStreams(String baseUrl, String apiKey, int clients) {
        if (clients < 1) throw new IllegalArgumentException("at least one client, was " + clients);
        this.baseUrl = baseUrl;
        this.apiKey = apiKey;
        for (int i = 0; i < clients; i++) {
            this.clients.add(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10))
                    .followRedirects(HttpClient.Redirect.NEVER).executor(Runnable::run).build());
        }
    }

    /** {@code GET path} with {@code Accept: text/event-stream}. */
    Stream get(String path, Listener listener) {
        return open(HttpRequest.newBuilder(URI.create(baseUrl + path)).GET(), "GET " + path, listener);
    }

    /** {@code POST path} of a JSON body with {@code Accept: text/event-stream} (a streamed exec). */
    Stream post(String path, String json, Listener listener) {
        return open(HttpRequest.newBuilder(URI.create(baseUrl + path)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)), "POST " + path, listener);
    }

    private Stream open(HttpRequest.Builder builder, String what, Listener listener) {
        var request = builder.header("Authorization", "Bearer " + apiKey).header("Accept", "text/event-stream").build();
        var stream = new Stream(what, listener);
        HttpClient client = clients.get(Math.floorMod(next.getAndIncrement(), clients.size()));
        client.sendAsync(request, stream::subscriber).whenComplete((response, failure) -> {
            if (failure != null) stream.fail(failure);
            else stream.ended.complete(null);
        });
        return stream;
    }

    /** Closes every connection at once (a stream the service still writes to ends with an error). */
    @Override
    public void close() {
        for (HttpClient client : clients) client.shutdownNow();
        for (HttpClient client : clients) {
            try {
                client.awaitTermination(SHUTDOWN_WAIT);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** One stream: when it opened, when it ended, and a way to leave it. */
    static final class Stream {
        private final String what;
        private final Listener listener;
        private final long started = System.nanoTime();
        /** {@link System#nanoTime()} when the 200 response's headers arrived (the service sends them with its first event). */
        final CompletableFuture<Long> opened = new CompletableFuture<>();
        /** Completes when the service ends the stream; exceptionally ({@link Refused}) when it answered with no stream. */
        final CompletableFuture<Void> ended = new CompletableFuture<>();
        private volatile Flow.Subscription subscription;
        private volatile boolean cancelled;

        private Stream(String what, Listener listener) {
            this.what = what;
            this.listener = listener;
        }

        String what() {
            return what;
        }

        /** {@link System#nanoTime()} when the request was sent. */
        long started() {
            return started;
        }

        /** Leaves the stream: the connection is closed. */
        void cancel() {
            cancelled = true;
            var s = subscription;
            if (s != null) s.cancel();
        }

        private void fail(Throwable failure) {
            Throwable cause = failure;
            while ((cause instanceof CompletionException || cause instanceof ExecutionException)
                    && cause.getCause() != null) cause = cause.getCause();
            opened.completeExceptionally(cause);
            ended.completeExceptionally(cause);
        }

        private HttpResponse.BodySubscriber<Void> subscriber(HttpResponse.ResponseInfo info) {
            if (info.statusCode() != 200) {
                return HttpResponse.BodySubscribers.mapping(HttpResponse.BodySubscribers.ofString(StandardCharsets.UTF_8), body -> {
                    throw new Refused(what, info.statusCode(), body);
                });
            }
            opened.complete(System.nanoTime());
            return new EventSubscriber();
        }

        /** Feeds the body to the parser as it comes, asking for everything at once. */
        private final class EventSubscriber implements HttpResponse.BodySubscriber<Void> {
            private final CompletableFuture<Void> body = new CompletableFuture<>();
            private final Parser parser = new Parser(listener);

            @Override
            public CompletionStage<Void> getBody() {
                return body;
            }

            @Override
            public void onSubscribe(Flow.Subscription s) {
                subscription = s;
                if (cancelled) s.cancel();
                else s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(List<ByteBuffer> buffers) {
                long now = System.nanoTime();
                try {
                    for (ByteBuffer buffer : buffers) parser.feed(buffer, now);
                } catch (RuntimeException e) {
                    // A listener that throws ends the stream; the failure is what ended reports.
                    body.completeExceptionally(e);
                    subscription.cancel();
                }
            }

            @Override
            public void onError(Throwable throwable) {
                body.completeExceptionally(throwable);
            }

            @Override
            public void onComplete() {
                body.complete(null);
            }
        }
    }

    /**
     * A push parser for {@code text/event-stream}: lines end with LF (a CR before it is dropped),
     * {@code data:} lines accumulate joined by {@code \n}, a blank line dispatches the event,
     * comments ({@code :...}, the service's heartbeats) and other fields are skipped. Bytes may come
     * split anywhere; a line is decoded as UTF-8 once complete. Package-private for its test.
     */
    static final class Parser {
        private final Listener listener;
        private byte[] scratch = new byte[0];
        private byte[] line = new byte[512];
        private int length;
        private final StringBuilder data = new StringBuilder();
        private boolean hasData;
        private String type = "";

        Parser(Listener listener) {
            this.listener = listener;
        }

        void feed(ByteBuffer buffer, long received) {
            int n = buffer.remaining();
            if (scratch.length < n) scratch = new byte[Math.max(n, 16 * 1024)];
            buffer.get(scratch, 0, n);
            int from = 0;
            for (int i = 0; i < n; i++) {
                if (scratch[i] != '\n') continue;
                append(scratch, from, i - from);
                endLine(received);
                from = i + 1;
            }
            append(scratch, from, n - from);
        }

        private void append(byte[] bytes, int from, int count) {
            if (count == 0) return;
            if (length + count > line.length) line = Arrays.copyOf(line, Math.max(line.length * 2, length + count));
            System.arraycopy(bytes, from, line, length, count);
            length += count;
        }

        private void endLine(long received) {
            int end = length > 0 && line[length - 1] == '\r' ? length - 1 : length;
            length = 0;
            if (end == 0) {
                dispatch(received);
                return;
            }
            if (line[0] == ':') return;
            int colon = 0;
            while (colon < end && line[colon] != ':') colon++;
            String field = new String(line, 0, colon, StandardCharsets.US_ASCII);
            int valueStart = Math.min(end, colon + 1);
            if (valueStart < end && line[valueStart] == ' ') valueStart++;
            switch (field) {
                case "event" -> type = new String(line, valueStart, end - valueStart, StandardCharsets.UTF_8);
                case "data" -> {
                    if (hasData) data.append('\n');
                    data.append(new String(line, valueStart, end - valueStart, StandardCharsets.UTF_8));
                    hasData = true;
                }
                default -> {
                    // id, retry and unknown fields: a benchmark client does not reconnect.
                }
            }
            if (line.length > 1 << 20) line = new byte[512]; // do not keep a huge event's buffer
        }

        private void dispatch(long received) {
            if (hasData) listener.event(type.isEmpty() ? "message" : type, data.toString(), received);
            data.setLength(0);
            hasData = false;
            type = "";
        }
    }
}
