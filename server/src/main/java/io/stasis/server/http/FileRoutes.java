package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.files.FileEvent;
import io.stasis.core.files.FileInfo;
import io.stasis.core.files.FileService;
import io.stasis.core.files.FileType;
import io.stasis.core.files.SandboxPath;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.http.Views.FileEventView;
import io.stasis.server.http.Views.FileView;
import io.stasis.server.http.Views.ListView;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** The files API: raw bytes in and out, streamed; paths confined to the sandbox root. */
final class FileRoutes {
    private static final int DEFAULT_LIST_LIMIT = 1000;
    private static final int MAX_LIST_LIMIT = 10_000;
    private static final Duration WATCH_POLL = Duration.ofSeconds(1);
    private static final int WATCH_QUEUE = 1024;

    private final FileService files;
    private final long maxUploadBytes;

    FileRoutes(FileService files, long maxUploadBytes) {
        this.files = files;
        this.maxUploadBytes = maxUploadBytes;
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/sandboxes/{id}/files", this::read, Access.FILES_READ);
        routes.put("/v1/sandboxes/{id}/files", this::write, Access.FILES_WRITE);
        routes.delete("/v1/sandboxes/{id}/files", this::delete, Access.FILES_WRITE);
        routes.get("/v1/sandboxes/{id}/files/list", this::list, Access.FILES_READ);
        routes.get("/v1/sandboxes/{id}/files/stat", ctx -> ctx.json(FileView.of(files.stat(AccessGuard.sandboxId(ctx), path(ctx, "path")))), Access.FILES_READ);
        routes.post("/v1/sandboxes/{id}/files/mkdir", this::mkdir, Access.FILES_WRITE);
        routes.post("/v1/sandboxes/{id}/files/move", this::move, Access.FILES_WRITE);
        routes.get("/v1/sandboxes/{id}/files/watch", this::watch, Access.FILES_READ);
    }

    private static SandboxPath path(Context ctx, String param) {
        return new SandboxPath(Query.required(ctx, param));
    }

    private void read(Context ctx) throws IOException {
        var content = files.read(AccessGuard.sandboxId(ctx), path(ctx, "path"));
        try (content; InputStream in = content.stream(); var out = ctx.outputStream()) {
            ctx.status(200);
            ctx.contentType("application/octet-stream");
            ctx.header("Content-Length", Long.toString(content.size()));
            in.transferTo(out);
        }
    }

    private void write(Context ctx) throws IOException {
        String declared = ctx.header("Content-Length");
        if (declared != null && !declared.isBlank() && Long.parseLong(declared.strip()) > maxUploadBytes)
            throw new StasisException(ErrorCode.PAYLOAD_TOO_LARGE,
                    "the upload is larger than the limit of " + maxUploadBytes + " bytes",
                    Map.of("limitBytes", maxUploadBytes));
        try (InputStream body = ctx.bodyInputStream()) {
            FileInfo info = files.write(AccessGuard.sandboxId(ctx), path(ctx, "path"), body, Query.mode(ctx), maxUploadBytes);
            ctx.json(FileView.of(info));
        }
    }

    private void delete(Context ctx) {
        files.delete(AccessGuard.sandboxId(ctx), path(ctx, "path"), Query.bool(ctx, "recursive", false));
        ctx.status(204);
    }

    private void list(Context ctx) {
        int limit = Query.integer(ctx, "limit", DEFAULT_LIST_LIMIT);
        if (limit < 1 || limit > MAX_LIST_LIMIT) throw StasisException.invalid("limit", "must be between 1 and " + MAX_LIST_LIMIT);
        String after = Query.string(ctx, "cursor").map(FileRoutes::decodeCursor).orElse(null);
        List<FileInfo> entries = files.list(AccessGuard.sandboxId(ctx), path(ctx, "path"));
        var page = entries.stream().filter(e -> after == null || e.name().compareTo(after) > 0).limit(limit + 1L).toList();
        boolean more = page.size() > limit;
        var items = more ? page.subList(0, limit) : page;
        String next = more ? encodeCursor(items.getLast().name()) : null;
        ctx.json(new ListView<>(items.stream().map(FileView::of).toList(), next));
    }

    private void mkdir(Context ctx) {
        var path = path(ctx, "path");
        String sandbox = AccessGuard.sandboxId(ctx);
        boolean existed = existsAsDirectory(sandbox, path);
        FileInfo info = files.mkdir(sandbox, path, Query.mode(ctx));
        ctx.status(existed ? 200 : 201).json(FileView.of(info));
    }

    private boolean existsAsDirectory(String sandbox, SandboxPath path) {
        try {
            return files.stat(sandbox, path).type() == FileType.DIRECTORY;
        } catch (StasisException e) {
            if (e.code() == ErrorCode.FILE_NOT_FOUND || e.code() == ErrorCode.NOT_A_DIRECTORY)
                return false;
            throw e;
        }
    }

    private void move(Context ctx) {
        var body = Json.body(ctx, Bodies.Move.class);
        if (body.from() == null) throw StasisException.invalid("from", "is required");
        if (body.to() == null) throw StasisException.invalid("to", "is required");
        FileInfo info = files.move(AccessGuard.sandboxId(ctx), new SandboxPath(body.from()), new SandboxPath(body.to()),
                Boolean.TRUE.equals(body.overwrite()));
        ctx.json(FileView.of(info));
    }

    private static String encodeCursor(String name) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(name.getBytes(StandardCharsets.UTF_8));
    }

    private static String decodeCursor(String cursor) {
        try {
            return new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw StasisException.invalid("cursor", "is not a cursor this API returned");
        }
    }


    /**
     * Changes under a path as Server-Sent Events: {@code ready} once the watch is in place, then
     * {@code create}, {@code modify}, {@code delete}, {@code move} as they happen, bursts coalesced;
     * {@code overflow} when the watch could not keep up (or its path went away) and the stream ends:
     * the client rescans and watches again. Live only: there is nothing to resume from.
     */
    private void watch(Context ctx) throws InterruptedException {
        // Bounded: a client that does not read ends its watch as overflowed rather than filling the heap.
        var batches = new LinkedBlockingQueue<List<FileEvent>>(WATCH_QUEUE);
        var fellBehind = new AtomicBoolean();
        try (var watch = files.watch(AccessGuard.sandboxId(ctx), path(ctx, "path"), Query.bool(ctx, "recursive", true), batch -> {
                 if (!batches.offer(batch)) fellBehind.set(true);
             });
             var sse = SseStream.open(ctx)) {
            sse.event("ready", Map.of());
            while (!sse.clientGone()) {
                var batch = batches.poll(WATCH_POLL.toMillis(), TimeUnit.MILLISECONDS);
                if (batch != null) {
                    for (var event : batch) sse.event(event.kind().wireName(), FileEventView.of(event));
                }
                boolean ended = batch != null ? batch.isEmpty() : watch.ended(); // an empty batch is the last
                if (ended || fellBehind.get()) {
                    sse.event("overflow", Map.of("reason", fellBehind.get() ? "overflowed" : watch.whyEnded().orElse("overflowed")));
                    return;
                }
            }
        } catch (SseStream.ClientGone e) {
            // the client left; closing the watch frees its kernel resources
        }
    }
}
