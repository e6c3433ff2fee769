package io.stasis.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.blob.content.archive.PolicyJson;
import io.stasis.core.error.StasisException;
import io.stasis.core.policy.Durations;
import io.stasis.core.policy.LifecyclePolicy;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code lifecycle} object of the API: durations as strings ({@code "15s"}), {@code null} for
 * never. A request names only what it changes; the rest comes from the base policy (the server's
 * defaults on create, the sandbox's current policy on PATCH). Its writer, shared with the checkpoint
 * descriptor, is {@link PolicyJson#lifecycle}.
 */
final class LifecycleJson {
    private static final Set<String> FIELDS = Set.of("pauseAfterIdle", "standbyAfterIdle", "hibernateAfterIdle", "stopAfterIdle", "deleteAfterIdle",
            "maxAge", "autoResume");

    private LifecycleJson() {
    }

    static LifecyclePolicy merge(LifecyclePolicy base, JsonNode changes) {
        if (changes == null || changes.isNull()) return base;
        if (!changes.isObject()) throw StasisException.invalid("lifecycle", "must be an object");
        changes.fieldNames().forEachRemaining(f -> {
            if (!FIELDS.contains(f)) throw StasisException.invalid("lifecycle." + f, "unknown field; known: " + String.join(", ", FIELDS.stream().sorted().toList()));
        });
        boolean autoResume = base.autoResume();
        if (changes.has("autoResume")) {
            if (!changes.get("autoResume").isBoolean()) throw StasisException.invalid("lifecycle.autoResume", "must be true or false");
            autoResume = changes.get("autoResume").booleanValue();
        }
        return new LifecyclePolicy(
                duration(changes, "pauseAfterIdle", base.pauseAfterIdle()),
                duration(changes, "standbyAfterIdle", base.standbyAfterIdle()),
                duration(changes, "hibernateAfterIdle", base.hibernateAfterIdle()),
                duration(changes, "stopAfterIdle", base.stopAfterIdle()),
                duration(changes, "deleteAfterIdle", base.deleteAfterIdle()),
                duration(changes, "maxAge", base.maxAge()),
                autoResume);
    }

    private static Optional<Duration> duration(JsonNode changes, String field, Optional<Duration> base) {
        if (!changes.has(field)) return base;
        JsonNode value = changes.get(field);
        if (value.isNull()) return Optional.empty();
        if (!value.isTextual()) throw StasisException.invalid("lifecycle." + field, "must be a duration string such as \"15s\", or null");
        return Optional.of(Durations.parse("lifecycle." + field, value.textValue()));
    }

}
