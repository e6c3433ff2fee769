package io.stasis.sdk;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One entry of the event log, oldest first by {@link #id()}.
 *
 * <table>
 * <caption>types and their data</caption>
 * <tr><td>{@code lifecycle}</td><td>{@code sandboxId, from, to, reason} (reasons {@code api},
 * {@code idle}, {@code ttl}, {@code fork}, {@code recovery}; {@code from} is {@code none} on creation)</td></tr>
 * <tr><td>{@code checkpoint}</td><td>{@code sandboxId, checkpointId, memory, sizeBytes}</td></tr>
 * <tr><td>{@code fork}</td><td>{@code sandboxId, checkpointId, children}</td></tr>
 * <tr><td>{@code error}</td><td>{@code sandboxId, step, message}</td></tr>
 * <tr><td>{@code network.denied}</td><td>{@code sandboxId, domain} (when a name was asked for or
 * presented), {@code address} (when known), {@code port, protocol, rule} (the rule that refused:
 * {@code "deny *.example.com"}, {@code "default deny"}, {@code "blocked link-local"}, ...)</td></tr>
 * <tr><td>{@code network.policy}</td><td>{@code sandboxId, default, allow, deny, rules} (the domains of
 * its header rules): the policy was replaced</td></tr>
 * </table>
 *
 * @param id   increases with every event; continue after it with {@code eventsAfter(id)}
 * @param type {@code lifecycle}, {@code checkpoint}, {@code fork}, {@code error},
 *             {@code network.denied}, {@code network.policy} (later server
 *             versions may add types)
 * @param at   when it happened
 * @param data the event's fields as JSON values (strings, numbers, booleans, lists)
 */
public record Event(long id, String type, Instant at, Map<String, Object> data) {
    public Event {
        // LinkedHashMap, not Map.copyOf: a field may be JSON null.
        data = data == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(data));
    }

    /** The sandbox it is about, or null. */
    public String sandboxId() {
        return string("sandboxId");
    }

    /** A data field as text, or null when absent or null. */
    public String string(String field) {
        Object value = data.get(field);
        return value == null ? null : value.toString();
    }
}
