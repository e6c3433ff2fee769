package io.stasis.sdk;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * One open {@code text/event-stream} response, read event by event. Events parsed past the one a
 * reader stopped at wait for the next {@link #next()}, so the caller can read up to a point (a
 * watch's {@code ready}) and hand the rest of the stream to a background thread. {@link #close()}
 * from another thread ends a blocked read: {@code next()} then returns null instead of failing.
 */
final class SseConnection implements AutoCloseable {
    static final String EVENT_STREAM = "text/event-stream";

    private final HttpTransport transport;
    private final HttpTransport.Call call;
    private final InputStream body;
    private final String requestId;
    private final Deque<SseEvent> parsed = new ArrayDeque<>();
    private final SseParser parser = new SseParser(parsed::add);
    private final byte[] buffer = new byte[8192];
    private volatile boolean closed;

    private SseConnection(HttpTransport transport, HttpTransport.Call call, HttpResponse<InputStream> response) {
        this.transport = transport;
        this.call = call;
        this.body = response.body();
        this.requestId = HttpTransport.header(response, HttpTransport.REQUEST_ID);
    }

    /**
     * Sends the call asking for an event stream. Error responses throw as usual; a success that is
     * not an event stream is a client error (the server does not speak this endpoint's protocol).
     */
    static SseConnection open(HttpTransport transport, HttpTransport.Call call) {
        var sse = call.accept(EVENT_STREAM);
        HttpResponse<InputStream> response = transport.send(sse);
        var connection = new SseConnection(transport, sse, response);
        String type = HttpTransport.header(response, "Content-Type");
        if (type == null || !type.startsWith(EVENT_STREAM)) {
            connection.close();
            throw new StasisClientException(transport.baseUrl() + " answered " + call.method() + " " + call.path()
                    + " with " + type + " instead of an event stream");
        }
        return connection;
    }

    /**
     * The next event, or null at the end of the stream or once closed.
     *
     * @throws StasisConnectionException when the connection breaks
     */
    SseEvent next() {
        while (parsed.isEmpty()) {
            int n;
            try {
                n = body.read(buffer);
            } catch (IOException e) {
                if (closed) return null;
                throw transport.brokenStream(call, e);
            }
            if (n < 0) {
                parser.finish();
                return null;
            }
            parser.feed(buffer, 0, n);
        }
        return parsed.poll();
    }

    String requestId() {
        return requestId;
    }

    /** Idempotent, and safe from any thread. */
    @Override
    public void close() {
        closed = true;
        try {
            body.close();
        } catch (IOException ignored) {
            // Nothing more will be read from it either way.
        }
    }
}
