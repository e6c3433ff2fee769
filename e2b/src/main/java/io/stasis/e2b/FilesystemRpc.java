package io.stasis.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.e2b.ConnectRpc.Code;
import io.stasis.e2b.ConnectRpc.RpcException;
import io.stasis.sdk.FileChange;
import io.stasis.sdk.FileInfo;
import io.stasis.sdk.FileType;
import io.stasis.sdk.FileWatch;
import io.stasis.sdk.SandboxFiles;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * envd's {@code filesystem.Filesystem} service onto Stasis's files API: entries as envd describes
 * them ({@code EntryInfo}: type, absolute path, size, mode and permissions, modification time),
 * paths relative to the user's home, a directory listing to a depth, and watches, both streamed
 * ({@code WatchDir}) and polled ({@code CreateWatcher}, {@code GetWatcherEvents}).
 */
final class FilesystemRpc {
    private static final int MAX_WATCHERS = 1024;
    private static final int WATCHER_QUEUE = 10_000;
    /** A polled watch nobody asked for this long is dropped (its client has gone without removing it). */
    private static final Duration WATCHER_IDLE = Duration.ofMinutes(10);

    private final Map<String, Watcher> watchers = new ConcurrentHashMap<>();

    /** A polled watch: its events wait here until fetched; {@code polledAt} is when its client last asked ({@link System#nanoTime}). */
    private record Watcher(String sandbox, FileWatch watch, LinkedBlockingQueue<Map<String, Object>> events, AtomicLong polledAt) {
        boolean abandoned(long now) {
            return !watch.isOpen() && events.isEmpty() || now - polledAt.get() > WATCHER_IDLE.toNanos();
        }
    }

    Map<String, Object> stat(EnvdCall call, JsonNode request) {
        return Map.of("entry", entry(files(call).stat(call.resolve(path(request)))));
    }

    Map<String, Object> listDir(EnvdCall call, JsonNode request) {
        int depth = request.path("depth").asInt(1);
        if (depth < 1) depth = 1;
        var entries = new ArrayList<Map<String, Object>>();
        list(files(call), call.resolve(path(request)), depth, entries);
        return Map.of("entries", entries);
    }

    private static void list(SandboxFiles files, String dir, int depth, List<Map<String, Object>> into) {
        for (FileInfo info : files.list(dir)) {
            into.add(entry(info));
            if (depth > 1 && info.type() == FileType.DIR) list(files, info.path(), depth - 1, into);
        }
    }

    /** MakeDir: {@code already_exists} for a directory that is there, as envd answers (the SDK then says false). */
    Map<String, Object> makeDir(EnvdCall call, JsonNode request) {
        String path = call.resolve(path(request));
        var files = files(call);
        if (files.exists(path)) throw new RpcException(Code.ALREADY_EXISTS, "path already exists: " + path);
        return Map.of("entry", entry(files.mkdir(path)));
    }

    Map<String, Object> move(EnvdCall call, JsonNode request) {
        String from = call.resolve(request.path("source").asText(""));
        String to = call.resolve(request.path("destination").asText(""));
        return Map.of("entry", entry(files(call).move(from, to, true)));
    }

    Map<String, Object> remove(EnvdCall call, JsonNode request) {
        files(call).delete(call.resolve(path(request)), true);
        return Map.of();
    }

    /** WatchDir: a start event once the watch is in place, then each change, until the client leaves or the watch ends. */
    void watchDir(EnvdCall call, JsonNode request, ConnectRpc.Stream stream) throws IOException, InterruptedException {
        String dir = call.resolve(path(request));
        var queue = new LinkedBlockingQueue<Map<String, Object>>(WATCHER_QUEUE);
        try (var watch = files(call).watch(dir, request.path("recursive").asBoolean(false), change -> offer(queue, dir, change))) {
            stream.send(Map.of("start", Map.of()));
            while (watch.isOpen() || !queue.isEmpty()) {
                var event = queue.poll(20, TimeUnit.SECONDS);
                stream.send(event == null ? Map.of("keepalive", Map.of()) : Map.of("filesystem", event));
            }
        }
    }

    Map<String, Object> createWatcher(EnvdCall call, JsonNode request) {
        long now = System.nanoTime();
        watchers.entrySet().removeIf(entry -> {
            boolean drop = entry.getValue().abandoned(now);
            if (drop) entry.getValue().watch().close();
            return drop;
        });
        if (watchers.size() >= MAX_WATCHERS) throw new RpcException(Code.RESOURCE_EXHAUSTED, "too many watchers; remove some first");
        String dir = call.resolve(path(request));
        var queue = new LinkedBlockingQueue<Map<String, Object>>(WATCHER_QUEUE);
        var watch = files(call).watch(dir, request.path("recursive").asBoolean(false), change -> offer(queue, dir, change));
        String id = UUID.randomUUID().toString();
        watchers.put(id, new Watcher(call.sandbox(), watch, queue, new AtomicLong(now)));
        return Map.of("watcherId", id);
    }

    Map<String, Object> getWatcherEvents(EnvdCall call, JsonNode request) {
        var watcher = watcher(call, request);
        var events = new ArrayList<Map<String, Object>>();
        watcher.events().drainTo(events);
        return Map.of("events", events);
    }

    Map<String, Object> removeWatcher(EnvdCall call, JsonNode request) {
        var watcher = watcher(call, request);
        watchers.remove(request.path("watcherId").asText());
        watcher.watch().close();
        return Map.of();
    }

    private Watcher watcher(EnvdCall call, JsonNode request) {
        var watcher = watchers.get(request.path("watcherId").asText(""));
        if (watcher == null || !watcher.sandbox().equals(call.sandbox())) throw new RpcException(Code.NOT_FOUND, "watcher not found");
        watcher.polledAt().set(System.nanoTime());
        return watcher;
    }

    /** Closes every polled watch (the service stops). */
    void close() {
        watchers.values().forEach(w -> w.watch().close());
        watchers.clear();
    }

    /** An E2B {@code FilesystemEvent}: the path relative to the watched directory, and what happened to it. */
    private static void offer(LinkedBlockingQueue<Map<String, Object>> queue, String dir, FileChange change) {
        String type = switch (change.kind()) {
            case CREATE -> "EVENT_TYPE_CREATE";
            case MODIFY -> "EVENT_TYPE_WRITE";
            case DELETE -> "EVENT_TYPE_REMOVE";
            case MOVE -> "EVENT_TYPE_RENAME";
            case OVERFLOW -> null;
        };
        if (type == null) return;
        String prefix = dir.endsWith("/") ? dir : dir + "/";
        String name = change.path().startsWith(prefix) ? change.path().substring(prefix.length()) : change.path();
        queue.offer(Map.of("name", name, "type", type));
    }

    private static SandboxFiles files(EnvdCall call) {
        return call.client().sandboxes().files(call.sandbox());
    }

    private static String path(JsonNode request) {
        return request.path("path").asText("");
    }

    /** envd's {@code EntryInfo} in protobuf's JSON (the 64-bit size as a string, enums by name). */
    static Map<String, Object> entry(FileInfo info) {
        var entry = new LinkedHashMap<String, Object>();
        entry.put("name", info.name());
        entry.put("type", switch (info.type()) {
            case FILE -> "FILE_TYPE_FILE";
            case DIR -> "FILE_TYPE_DIRECTORY";
            case SYMLINK -> "FILE_TYPE_SYMLINK";
            default -> "FILE_TYPE_UNSPECIFIED";
        });
        entry.put("path", info.path());
        entry.put("size", Long.toString(info.size()));
        int mode = info.mode() == null ? 0 : Integer.parseInt(info.mode(), 8);
        entry.put("mode", mode);
        entry.put("permissions", permissions(info.type(), mode));
        entry.put("owner", "");
        entry.put("group", "");
        if (info.modifiedAt() != null) entry.put("modifiedTime", info.modifiedAt().toString());
        if (info.symlinkTarget() != null) entry.put("symlinkTarget", info.symlinkTarget());
        return entry;
    }

    private static String permissions(FileType type, int mode) {
        var text = new StringBuilder(type == FileType.DIR ? "d" : type == FileType.SYMLINK ? "l" : "-");
        String letters = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) text.append((mode & (1 << (8 - i))) != 0 ? letters.charAt(i) : '-');
        return text.toString();
    }
}
