package io.stasis.sdk;

/** Pages of {@code GET /v1/events} or {@code GET /v1/sandboxes/{id}/events}; the cursor is an event id. */
final class EventPages {
    private EventPages() {
    }

    /** The page of events after {@code afterId} (null: from the first). */
    static Page<Event> after(HttpTransport transport, String path, String afterId) {
        Page.Body<Event> body = transport.page(transport.call("GET", path).query(Query.of().add("after", afterId)),
                Event.class);
        return new Page<>(body.items(), body.nextCursor(), cursor -> after(transport, path, cursor));
    }

    static String afterId(long id) {
        if (id < 0) throw new IllegalArgumentException("an event id is never negative, was " + id);
        return Long.toString(id);
    }
}
