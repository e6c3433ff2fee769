package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.Event;
import io.stasis.core.events.EventLog;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.Views.ListView;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event log: {@code GET /v1/events} and {@code GET /v1/sandboxes/{id}/events}, as pages of JSON
 * (oldest first from {@code ?after=<event id>}; {@code nextCursor} is the id to continue after), or
 * with {@code Accept: text/event-stream} as a live stream that first replays what came after
 * {@code Last-Event-ID} (or {@code ?after=}), then goes on without a gap or a repeat.
 */
final class EventRoutes {
    private static final Logger log = LoggerFactory.getLogger(EventRoutes.class);
    private static final int DEFAULT_LIMIT = 100;
    private static final int MAX_LIMIT = 1000;

    /** How often a stream on a catalog shared with other nodes looks for their events. */
    private static final Duration SHARED_POLL = Duration.ofMillis(250);

    private final EventLog events;
    private final boolean shared;

    /** @param shared whether other nodes share the catalog (and append events this node does not hear of) */
    EventRoutes(EventLog events, boolean shared) {
        this.events = events;
        this.shared = shared;
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/events", ctx -> page(ctx, Optional.empty()), Access.TENANT);
        routes.get("/v1/sandboxes/{id}/events", ctx -> page(ctx, Optional.of(new SandboxId(AccessGuard.sandboxId(ctx)))),
                Access.SANDBOX_READ);
    }

    private void page(Context ctx, Optional<SandboxId> sandbox) {
        long after = Optional.ofNullable(ctx.header("Last-Event-ID")).filter(h -> !h.isBlank())
                .or(() -> Query.string(ctx, "after")).or(() -> Query.string(ctx, "cursor"))
                .map(text -> text.equals("now") ? events.lastId() : eventId(text)).orElse(0L);
        if (SseStream.wanted(ctx)) {
            stream(ctx, sandbox, after);
            return;
        }
        int limit = Query.integer(ctx, "limit", DEFAULT_LIMIT);
        if (limit < 1 || limit > MAX_LIMIT) throw StasisException.invalid("limit", "must be between 1 and " + MAX_LIMIT);
        var items = events.after(after, sandbox, BearerAuth.caller(ctx).tenant(), limit);
        String next = items.size() == limit ? Long.toString(items.getLast().id()) : null;
        ctx.json(new ListView<>(items.stream().map(EventRoutes::view).toList(), next));
    }

    /**
     * Subscribes first, then replays from the catalog, then serves the subscription, skipping what
     * the replay already sent: no event falls between the two.
     */
    private void stream(Context ctx, Optional<SandboxId> sandbox, long after) {
        var live = new LinkedBlockingQueue<Event>();
        var viewer = BearerAuth.caller(ctx).tenant();
        try (var subscription = events.subscribe(e -> {
                 if ((sandbox.isEmpty() || sandbox.equals(e.sandbox())) && e.visibleTo(viewer)) live.add(e);
             });
             var sse = SseStream.open(ctx)) {
            long sent = after;
            while (true) {
                var page = events.after(sent, sandbox, viewer, MAX_LIMIT);
                for (var e : page) sent = send(sse, e);
                if (page.size() < MAX_LIMIT) break;
            }
            while (!sse.clientGone()) {
                var e = live.poll(shared ? SHARED_POLL.toMillis() : 1000, TimeUnit.MILLISECONDS);
                if (!shared) {
                    if (e != null && e.id() > sent) sent = send(sse, e);
                    continue;
                }
                // Other nodes append too: the catalog has every event in id order, and this node's are only a wake-up.
                while (true) {
                    var page = events.after(sent, sandbox, viewer, MAX_LIMIT);
                    for (var next : page) sent = send(sse, next);
                    if (page.size() < MAX_LIMIT) break;
                }
                live.clear();
            }
        } catch (SseStream.ClientGone e) {
            log.atDebug().log("event stream client went away");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            if (e instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e);
        }
    }

    private static long send(SseStream sse, Event e) {
        sse.event(e.type(), Long.toString(e.id()), e.data());
        return e.id();
    }

    private static long eventId(String text) {
        try {
            long id = Long.parseLong(text);
            if (id < 0) throw new NumberFormatException();
            return id;
        } catch (NumberFormatException e) {
            throw StasisException.invalid("after", "must be an event id, was '" + text + "'");
        }
    }

    static Map<String, Object> view(Event e) {
        var out = new LinkedHashMap<String, Object>();
        out.put("id", e.id());
        out.put("type", e.type());
        out.put("at", Instant.from(e.at()).toString());
        out.put("data", e.data());
        return out;
    }
}
