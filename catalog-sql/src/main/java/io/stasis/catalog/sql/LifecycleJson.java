package io.stasis.catalog.sql;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.policy.IdlePolicy;
import io.stasis.core.policy.LifecyclePolicy;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * A {@link LifecyclePolicy} as the JSON object in the {@code lifecycle} column, e.g.
 * {@code {"pauseAfterIdle":"PT15S","hibernateAfterIdle":"PT10M","stopAfterIdle":null,...,"autoResume":true}}.
 *
 * <p>Durations are ISO-8601 ({@link Duration#toString()}): exact for every {@link Duration}, down
 * to the nanosecond, and readable in the sqlite3 shell. "Never" is JSON {@code null}. Every key is
 * written, and reading requires every key, so a damaged or foreign value is reported instead of
 * silently becoming a different policy. The V2 migration writes the same shape for old rows.
 */
final class LifecycleJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private LifecycleJson() {
    }

    static String toJson(LifecyclePolicy policy) {
        ObjectNode node = JSON.createObjectNode(); // insertion order: the record's field order
        putDuration(node, "pauseAfterIdle", policy.pauseAfterIdle());
        putDuration(node, "standbyAfterIdle", policy.standbyAfterIdle());
        putDuration(node, "hibernateAfterIdle", policy.hibernateAfterIdle());
        putDuration(node, "stopAfterIdle", policy.stopAfterIdle());
        putDuration(node, "deleteAfterIdle", policy.deleteAfterIdle());
        putDuration(node, "maxAge", policy.maxAge());
        node.put("autoResume", policy.autoResume());
        putDuration(node, "checkpointEvery", policy.checkpointEvery());
        node.put("atMaxAge", policy.atMaxAge().wireName());
        putDuration(node, "wakeFor", policy.wakeFor());
        return node.toString();
    }

    private static void putDuration(ObjectNode node, String key, Optional<Duration> duration) {
        if (duration.isPresent()) node.put(key, duration.get().toString());
        else node.putNull(key);
    }

    /** Reads what {@link #toJson} wrote; anything else is an {@link IllegalArgumentException} naming the problem. */
    static LifecyclePolicy fromJson(String json) throws JsonProcessingException {
        JsonNode node = JSON.readTree(json);
        if (node == null || !node.isObject()) throw new IllegalArgumentException("lifecycle is not a JSON object: " + json);
        JsonNode autoResume = required(node, "autoResume");
        if (!autoResume.isBoolean()) throw new IllegalArgumentException("lifecycle.autoResume is not a boolean: " + autoResume);
        // standbyAfterIdle came later: rows written before it have none, and never go to standby.
        var standby = node.has("standbyAfterIdle") ? duration(node, "standbyAfterIdle") : Optional.<Duration>empty();
        // So did checkpointEvery: rows written before it keep no durability checkpoints.
        var checkpointEvery = node.has("checkpointEvery") ? duration(node, "checkpointEvery") : Optional.<Duration>empty();
        // And atMaxAge with wakeFor: in rows before them, maxAge deletes.
        var atMaxAge = IdlePolicy.Action.DELETE;
        if (node.has("atMaxAge")) {
            JsonNode action = node.get("atMaxAge");
            atMaxAge = (action.isTextual() ? IdlePolicy.Action.byWireName(action.textValue()) : Optional.<IdlePolicy.Action>empty())
                    .orElseThrow(() -> new IllegalArgumentException("lifecycle.atMaxAge is not a step of the idle ladder: " + action));
        }
        var wakeFor = node.has("wakeFor") ? duration(node, "wakeFor") : Optional.<Duration>empty();
        return new LifecyclePolicy(duration(node, "pauseAfterIdle"), standby, duration(node, "hibernateAfterIdle"),
                duration(node, "stopAfterIdle"), duration(node, "deleteAfterIdle"), duration(node, "maxAge"),
                autoResume.booleanValue(), checkpointEvery, atMaxAge, wakeFor);
    }

    private static Optional<Duration> duration(JsonNode node, String key) {
        JsonNode value = required(node, key);
        if (value.isNull()) return Optional.empty();
        if (!value.isTextual()) throw new IllegalArgumentException("lifecycle." + key + " is not an ISO-8601 duration or null: " + value);
        try {
            return Optional.of(Duration.parse(value.textValue()));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("lifecycle." + key + " is not an ISO-8601 duration: " + value, e);
        }
    }

    private static JsonNode required(JsonNode node, String key) {
        JsonNode value = node.get(key);
        if (value == null) throw new IllegalArgumentException("lifecycle has no '" + key + "'");
        return value;
    }
}
