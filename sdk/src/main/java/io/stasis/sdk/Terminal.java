package io.stasis.sdk;

import java.io.ByteArrayOutputStream;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * An interactive terminal in a sandbox over the WebSocket {@code GET /v1/sandboxes/{id}/terminal}:
 * bytes typed go in with {@link #write}, what the terminal shows comes out to
 * {@link #onOutput}. The process is an ordinary background process ({@link #pid()}): it survives
 * pause and hibernation, and the processes API reads its output. Thread-safe.
 *
 * <pre>{@code
 * try (Terminal t = sandbox.terminal(TerminalRequest.builder().size(100, 30).build())) {
 *     t.onOutput(bytes -> System.out.print(new String(bytes, UTF_8)));
 *     t.write("echo hello; exit 3\n");
 *     int code = t.awaitExit(Duration.ofSeconds(10));   // 3
 * }
 * }</pre>
 *
 * Output that arrives before a consumer is set is kept and handed to the first one.
 */
public final class Terminal implements AutoCloseable {
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(2);

    private final String where;
    private final CompletableFuture<Long> started = new CompletableFuture<>();
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    private final CompletableFuture<Void> closed = new CompletableFuture<>();
    private final Object outputLock = new Object();
    private final ThreadLocal<Boolean> inCallback = ThreadLocal.withInitial(() -> false);
    private ByteArrayOutputStream early;
    private Consumer<byte[]> output;
    private volatile TerminalMessage.Error lastError;
    private CompletableFuture<WebSocket> sending;
    private WebSocket socket;

    private Terminal(String where, Consumer<byte[]> output) {
        this.where = where;
        this.output = output;
        this.early = output == null ? new ByteArrayOutputStream() : null;
    }

    /**
     * Opens the socket and waits (within the request timeout) for the server's {@code started},
     * so that a failed start throws here as the mapped API error.
     */
    static Terminal open(HttpTransport transport, String path, TerminalRequest request, Consumer<byte[]> output) {
        var terminal = new Terminal(transport.baseUrl() + path, output);
        Duration timeout = transport.requestTimeout();
        WebSocket socket = transport.webSocket(path, request.toQuery(), terminal.new Frames(), timeout);
        synchronized (terminal) {
            terminal.socket = socket;
            terminal.sending = CompletableFuture.completedFuture(socket);
        }
        try {
            terminal.awaitStart(timeout);
        } catch (RuntimeException e) {
            socket.abort();
            throw e;
        }
        return terminal;
    }

    private void awaitStart(Duration timeout) {
        try {
            if (timeout == null) {
                started.get();
            } else {
                started.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (TimeoutException e) {
            throw new StasisTimeoutException("the terminal at " + where + " did not start within " + timeout, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StasisClientException("interrupted while opening the terminal at " + where, e);
        } catch (ExecutionException e) {
            throw unwrap(e.getCause());
        }
    }

    /** The process on the terminal, as the processes API addresses it. */
    public long pid() {
        return started.join();
    }

    /**
     * Sets where the terminal's output goes (replacing the previous consumer); output that came
     * before the first consumer is handed to it at once. Called on the socket's thread, in order:
     * it should not block for long.
     */
    public Terminal onOutput(Consumer<byte[]> consumer) {
        synchronized (outputLock) {
            output = consumer;
            if (early != null && early.size() > 0 && consumer != null) consumer.accept(early.toByteArray());
            if (consumer != null) early = null;
        }
        return this;
    }

    /** Types these bytes (keys, pasted text, control characters such as {@code 0x03} for Ctrl-C). */
    public void write(byte[] bytes) {
        byte[] copy = bytes.clone();
        send(ws -> ws.sendBinary(ByteBuffer.wrap(copy), true), "write to");
    }

    /** Types this text as UTF-8. */
    public void write(String text) {
        write(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Ends the input, as Ctrl-D typed at an empty line would: a shell reading a script from this
     * terminal ends once it has run it. The server types Ctrl-D again while the program waits at a
     * line editor's prompt, so a Ctrl-D that arrived while a command ran is not lost. Nothing can
     * be written after it.
     */
    public void closeInput() {
        String message = TerminalMessage.endOfInput();
        send(ws -> ws.sendText(message, true), "end the input of");
    }

    /** Resizes the terminal; its foreground job gets SIGWINCH. */
    public void resize(int cols, int rows) {
        String message = TerminalMessage.resize(new TerminalSize(cols, rows));
        send(ws -> ws.sendText(message, true), "resize");
    }

    /** Whether the socket is still open (the process may have ended meanwhile). */
    public boolean isOpen() {
        return !closed.isDone();
    }

    /**
     * Waits for the process to end and returns its exit code (128+N when signal N ended it).
     *
     * @param timeout null: as long as it takes
     * @throws StasisTimeoutException    when it still runs after {@code timeout}
     * @throws StasisConnectionException when the socket closed before the process ended
     */
    public int awaitExit(Duration timeout) {
        try {
            return timeout == null ? exit.get() : exit.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new StasisTimeoutException("the process on the terminal at " + where + " still runs after " + timeout, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StasisClientException("interrupted while waiting for the terminal at " + where, e);
        } catch (ExecutionException e) {
            throw unwrap(e.getCause());
        }
    }

    /**
     * Closes the socket. A new terminal's process gets SIGHUP unless the request said
     * {@code hangup(false)}; an attached one keeps running unless it said {@code hangup(true)}.
     */
    @Override
    public void close() {
        if (closed.isDone()) return;
        try {
            send(ws -> ws.sendClose(WebSocket.NORMAL_CLOSURE, "closed by the client"), "close");
            closed.get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (StasisClientException | TimeoutException | ExecutionException e) {
            // The socket is going away either way.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            WebSocket current;
            synchronized (this) {
                current = socket;
            }
            if (current != null) current.abort();
            ended(new StasisConnectionException("the terminal at " + where + " was closed by the client", null));
        }
    }

    /**
     * One message at a time, in order (the WebSocket refuses a send while another is under way).
     * Waits for it, except on the socket's own thread, where waiting could stall the socket.
     */
    private void send(Function<WebSocket, CompletableFuture<WebSocket>> message, String what) {
        CompletableFuture<WebSocket> mine;
        synchronized (this) {
            if (sending == null) throw new IllegalStateException("the terminal is not open yet");
            mine = sending.thenCompose(message);
            sending = mine;
        }
        if (inCallback.get()) return;
        try {
            mine.join();
        } catch (CompletionException e) {
            throw new StasisConnectionException("cannot " + what + " the terminal at " + where + ": "
                    + HttpTransport.reason(e.getCause()), e.getCause());
        }
    }

    private void handle(TerminalMessage message) {
        switch (message) {
            case TerminalMessage.Started s -> started.complete(s.pid());
            case TerminalMessage.Exit x -> exit.complete(x.exitCode());
            case TerminalMessage.Error error -> {
                lastError = error;
                started.completeExceptionally(error.toException());
            }
            case TerminalMessage.Other ignored -> {
                // A later server's message: nothing to do.
            }
        }
    }

    private void deliver(byte[] bytes) {
        synchronized (outputLock) {
            if (output != null) {
                output.accept(bytes);
            } else if (early != null) {
                early.writeBytes(bytes);
            }
        }
    }

    /** The socket is gone: whatever was still awaited fails with {@code why}. */
    private void ended(RuntimeException why) {
        TerminalMessage.Error error = lastError;
        RuntimeException cause = error != null ? error.toException() : why;
        started.completeExceptionally(cause);
        exit.completeExceptionally(cause);
        closed.complete(null);
    }

    private static RuntimeException unwrap(Throwable cause) {
        if (cause instanceof RuntimeException runtime) return runtime;
        return new StasisClientException("terminal failed: " + cause, cause);
    }

    /** Receives the socket's frames; runs on the HTTP client's thread. */
    private final class Frames implements WebSocket.Listener {
        private final StringBuilder text = new StringBuilder();

        @Override
        public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
            byte[] bytes = new byte[data.remaining()];
            data.get(bytes);
            return inCallback(webSocket, () -> deliver(bytes));
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            text.append(data);
            if (!last) {
                webSocket.request(1);
                return null;
            }
            String message = text.toString();
            text.setLength(0);
            return inCallback(webSocket, () -> handle(TerminalMessage.parse(message)));
        }

        @Override
        public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
            ended(new StasisConnectionException("the terminal at " + where + " closed (" + statusCode
                    + (reason == null || reason.isEmpty() ? "" : " " + reason) + ") before its process ended", null));
            return null;
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            ended(new StasisConnectionException("the terminal connection to " + where + " failed: "
                    + HttpTransport.reason(error), error));
        }

        private CompletionStage<?> inCallback(WebSocket webSocket, Runnable work) {
            inCallback.set(true);
            try {
                work.run();
            } catch (RuntimeException e) {
                ended(e);
                webSocket.abort();
                return null;
            } finally {
                inCallback.set(false);
            }
            webSocket.request(1);
            return null;
        }
    }
}
