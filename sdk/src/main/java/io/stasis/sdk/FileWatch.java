package io.stasis.sdk;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Changes under a path in a sandbox as they happen ({@code GET .../files/watch}, Server-Sent
 * Events), from {@link SandboxFiles#watch(String, boolean, Consumer)}. The watch is installed when
 * {@code watch} returns: every change after that is reported. It is live, not resumable: when its
 * connection breaks it ends with that failure ({@link #await}) and changes meanwhile are not
 * replayed; when the kernel drops events it ends after an {@link FileChange.Kind#OVERFLOW}. In
 * both cases a caller that keeps a picture of the tree should rescan it.
 *
 * <pre>{@code
 * try (FileWatch watch = sandbox.files().watch("/root", true, change -> System.out.println(change))) {
 *     sandbox.exec("sh", "-c", "echo hi > /root/a.txt");   // prints "create /root/a.txt", "modify /root/a.txt"
 *     ...
 * }
 * }</pre>
 */
public final class FileWatch extends StreamedSubscription {
    private static final int WAITING = 0;
    private static final int READY = 1;
    private static final int TIMED_OUT = 2;

    private final String path;
    private final boolean recursive;
    private final Consumer<FileChange> consumer;
    private volatile boolean overflowed;
    private BackgroundStream stream;

    private FileWatch(String path, boolean recursive, Consumer<FileChange> consumer) {
        this.path = path;
        this.recursive = recursive;
        this.consumer = consumer;
    }

    /**
     * Connects and waits for the server's {@code ready} (within the request timeout) on the
     * caller's thread, so that a refused watch (404 {@code file_not_found}, 422) throws here.
     */
    static FileWatch open(SandboxCalls calls, String path, boolean recursive, Consumer<FileChange> consumer) {
        var transport = calls.transport();
        var call = transport.call("GET", calls.path("/files/watch"))
                .query(Query.path(path).add("recursive", recursive));
        var watch = new FileWatch(path, recursive, consumer);
        SseConnection connection = SseConnection.open(transport, call);
        try {
            watch.awaitReady(connection, transport.requestTimeout());
        } catch (RuntimeException e) {
            connection.close();
            throw e;
        }
        watch.stream = BackgroundStream.start("stasis-watch", s -> watch.follow(s, connection));
        return watch;
    }

    /** The watched path. */
    public String path() {
        return path;
    }

    public boolean recursive() {
        return recursive;
    }

    /** Whether it ended because the kernel dropped events. */
    public boolean overflowed() {
        return overflowed;
    }

    @Override
    BackgroundStream stream() {
        return stream;
    }

    private void awaitReady(SseConnection connection, Duration timeout) {
        var state = new AtomicInteger(WAITING);
        if (timeout != null) {
            CompletableFuture.delayedExecutor(timeout.toMillis(), TimeUnit.MILLISECONDS).execute(() -> {
                if (state.compareAndSet(WAITING, TIMED_OUT)) connection.close();
            });
        }
        for (SseEvent event; (event = connection.next()) != null; ) {
            if ("ready".equals(event.event())) {
                if (state.compareAndSet(WAITING, READY)) return;
                break;
            }
            if (!handle(event, connection)) break;
        }
        if (state.get() == TIMED_OUT) {
            throw new StasisTimeoutException("the watch of " + path + " was not ready within " + timeout, null);
        }
        throw new StasisConnectionException("the watch of " + path + " ended before it was ready", null);
    }

    private void follow(BackgroundStream background, SseConnection connection) {
        background.reading(connection);
        try (connection) {
            for (SseEvent event; (event = connection.next()) != null; ) {
                if (!handle(event, connection)) return;
            }
        }
        if (!background.isClosing()) {
            throw new StasisConnectionException("the watch of " + path + " ended: the server closed the stream", null);
        }
    }

    /** Delivers one event; false when it ends the watch. */
    private boolean handle(SseEvent event, SseConnection connection) {
        switch (event.event()) {
            case "overflow" -> {
                overflowed = true;
                consumer.accept(new FileChange(FileChange.Kind.OVERFLOW, path, null, null));
                return false;
            }
            case "error" -> throw ApiErrors.fromStreamEvent(event, connection.requestId());
            default -> {
                FileChange.Kind kind = FileChange.Kind.fromWire(event.event());
                if (kind != null) consumer.accept(parse(kind, event));
                return true; // ready again, keep-alives, later additions: nothing to deliver
            }
        }
    }

    private static FileChange parse(FileChange.Kind kind, SseEvent event) {
        try {
            var change = Wire.MAPPER.readValue(event.data(), ChangeWire.class);
            return new FileChange(kind, change.path(), FileType.fromWire(change.fileType()), change.from());
        } catch (IOException e) {
            throw new StasisClientException("cannot read file change '" + event.event() + "': " + e.getMessage(), e);
        }
    }

    /** The data of a change event. */
    record ChangeWire(String type, String path, String fileType, String from) {
    }
}
