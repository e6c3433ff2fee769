package io.stasis.core.events;

import io.stasis.core.sandbox.SandboxId;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Something that happened, kept in order: a lifecycle transition, a checkpoint, a fork, an
 * error. {@code id} increases with every event and is the resume point of event streams.
 *
 * @param type the stream's event name: {@code lifecycle}, {@code checkpoint}, {@code fork}, {@code error}
 * @param data the event's fields, as they appear on the wire
 */
public record Event(long id, Instant at, String type, Optional<SandboxId> sandbox, Map<String, Object> data) {
    public Event {
        Objects.requireNonNull(at);
        Objects.requireNonNull(type);
        Objects.requireNonNull(sandbox);
        data = Map.copyOf(data);
    }
}
