package io.stasis.server.http;

import io.javalin.http.Context;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A Server-Sent Events response written by the handler's own (virtual) thread, with a heartbeat
 * comment every 15 s so that proxies and clients keep an idle stream open.
 */
final class SseStream implements AutoCloseable {
    static final Duration HEARTBEAT = Duration.ofSeconds(15);

    private final OutputStream out;
    private final ReentrantLock lock = new ReentrantLock();
    private final Thread heartbeat;
    private volatile boolean closed;
    private volatile boolean closedByUs;

    private SseStream(OutputStream out) {
        this.out = out;
        this.heartbeat = Thread.ofVirtual().name("sse-heartbeat").start(this::beat);
    }

    static boolean wanted(Context ctx) {
        String accept = ctx.header("Accept");
        return accept != null && accept.contains("text/event-stream");
    }

    static SseStream open(Context ctx) {
        ctx.status(200);
        ctx.contentType("text/event-stream; charset=utf-8");
        ctx.header("Cache-Control", "no-cache");
        ctx.header("X-Accel-Buffering", "no");
        try {
            var stream = new SseStream(ctx.res().getOutputStream());
            stream.flush();
            return stream;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether a write found the client gone (heartbeats notice it on quiet streams). */
    boolean clientGone() {
        return closed && !closedByUs;
    }

    void event(String name, Object data) {
        write("event: " + name + "\ndata: " + Json.write(data) + "\n\n");
    }

    /** An event with an {@code id:} line, the point a client can resume from. */
    void event(String name, String id, Object data) {
        send(frame(name, id, data));
    }

    /** An event with an {@code id:} line as it goes on the wire: made once, it can be sent on many streams. */
    static byte[] frame(String name, String id, Object data) {
        return ("event: " + name + "\nid: " + id + "\ndata: " + Json.write(data) + "\n\n").getBytes(StandardCharsets.UTF_8);
    }

    /** Sends an event made by {@link #frame}. */
    void send(byte[] frame) {
        lock.lock();
        try {
            out.write(frame);
            out.flush();
        } catch (IOException e) {
            closed = true;
            throw new ClientGone(e);
        } finally {
            lock.unlock();
        }
    }

    private void beat() {
        try {
            while (!closed) {
                Thread.sleep(HEARTBEAT);
                if (!closed) write(": ping\n\n");
            }
        } catch (InterruptedException | ClientGone e) {
            // the stream ended
        }
    }

    private void write(String text) {
        send(text.getBytes(StandardCharsets.UTF_8));
    }

    private void flush() throws IOException {
        out.flush();
    }

    @Override
    public void close() {
        closedByUs = true;
        closed = true;
        heartbeat.interrupt();
    }

    /** The client closed the connection; there is nobody left to answer. */
    static final class ClientGone extends UncheckedIOException {
        ClientGone(IOException cause) {
            super("the client went away", cause);
        }
    }
}
