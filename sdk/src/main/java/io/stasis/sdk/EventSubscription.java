package io.stasis.sdk;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The event log followed live ({@code GET /v1/events} or a sandbox's, as Server-Sent Events): the
 * events after a given id first, then each new one as it happens. A broken connection is resumed
 * with {@code Last-Event-ID} from the last event delivered, so none is missed or repeated.
 *
 * <pre>{@code
 * try (EventSubscription events = client.streamEvents(0, e -> System.out.println(e.id() + " " + e.type()))) {
 *     sandbox.hibernate();
 *     ...
 * }
 * }</pre>
 *
 * Streamed events have no {@link Event#at() time}: the stream carries only the id, type and data.
 */
public final class EventSubscription extends StreamedSubscription {
    private final HttpTransport transport;
    private final String path;
    private final Consumer<Event> consumer;
    private volatile long lastEventId;
    private final BackgroundStream stream;

    private EventSubscription(HttpTransport transport, String path, long afterId, Consumer<Event> consumer,
                              SseConnection first) {
        this.transport = transport;
        this.path = path;
        this.consumer = consumer;
        this.lastEventId = afterId;
        this.stream = BackgroundStream.start("stasis-events", s -> follow(s, first));
    }

    /**
     * Connects on the caller's thread, so that a refused call (an unknown sandbox, a bad key)
     * throws here; the rest runs in the background.
     */
    static EventSubscription open(HttpTransport transport, String path, long afterId, Consumer<Event> consumer) {
        EventPages.afterId(afterId);
        var first = SseConnection.open(transport, transport.call("GET", path).query(Query.of().add("after", afterId)));
        return new EventSubscription(transport, path, afterId, consumer, first);
    }

    /** The id of the last event handed to the consumer (or the one it started after). */
    public long lastEventId() {
        return lastEventId;
    }

    @Override
    BackgroundStream stream() {
        return stream;
    }

    private void follow(BackgroundStream background, SseConnection first) {
        try {
            resume(background, first);
        } catch (ConsumerFailure failure) {
            throw failure.thrown();
        }
    }

    private void resume(BackgroundStream background, SseConnection first) {
        var reconnects = new Reconnects(background::pause, Reconnects.GIVE_UP_AFTER);
        SseConnection connection = first;
        reconnects.connected();
        while (!background.isClosing()) {
            try {
                if (connection == null) {
                    connection = SseConnection.open(transport, transport.call("GET", path)
                            .header("Last-Event-ID", Long.toString(lastEventId)));
                    reconnects.connected();
                }
                background.reading(connection);
                readAll(connection, reconnects);
                if (background.isClosing()) return;
                reconnects.afterFailure(new StasisConnectionException("the event stream from " + transport.baseUrl()
                        + " (" + path + ") ended", null));
            } catch (StasisConnectionException e) {
                if (background.isClosing()) return;
                reconnects.afterFailure(e);
            } finally {
                if (connection != null) connection.close();
                connection = null;
            }
        }
    }

    private void readAll(SseConnection connection, Reconnects reconnects) {
        for (SseEvent event; (event = connection.next()) != null; ) {
            reconnects.progressed();
            if ("error".equals(event.event())) throw ApiErrors.fromStreamEvent(event, connection.requestId());
            Event parsed = parse(event);
            if (parsed.id() <= lastEventId) continue; // replayed after a reconnect
            lastEventId = parsed.id(); // first, so that the consumer sees it too
            ConsumerFailure.call(() -> consumer.accept(parsed));
        }
    }

    private static Event parse(SseEvent event) {
        long id;
        try {
            id = Long.parseLong(event.id());
        } catch (NumberFormatException e) {
            throw new StasisClientException("an event without a numeric id: '" + event.id() + "'", e);
        }
        try {
            Map<String, Object> data = Wire.MAPPER.readValue(event.data(), Wire.MAPPER.getTypeFactory()
                    .constructMapType(LinkedHashMap.class, String.class, Object.class));
            return new Event(id, event.event(), null, data);
        } catch (IOException e) {
            throw new StasisClientException("cannot read event " + id + ": " + e.getMessage(), e);
        }
    }
}
