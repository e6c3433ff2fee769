package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonValue;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Changes to a sandbox's idle policy ({@link LifecyclePolicy}). Only the fields named here are
 * sent; every other field keeps its value (the sandbox's current one for
 * {@link Sandbox#updateLifecycle}, the server's default for
 * {@link CreateSandboxRequest.Builder#lifecycle}). A null duration means never.
 *
 * <pre>{@code
 * sandbox = sandbox.updateLifecycle(LifecycleUpdate.builder()
 *         .pauseAfterIdle(Duration.ofMinutes(1))
 *         .stopAfterIdle(null)                 // never stop for idleness
 *         .autoResume(false)
 *         .build());                           // sends {"pauseAfterIdle":"1m","stopAfterIdle":null,"autoResume":false}
 * }</pre>
 */
public final class LifecycleUpdate {
    private final Map<String, Object> fields;

    private LifecycleUpdate(Map<String, Object> fields) {
        this.fields = Collections.unmodifiableMap(new LinkedHashMap<>(fields));
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The wire fields this update sends, in the order they were set: a duration as the API writes
     * it ({@code "15s"}), null for never, a Boolean for {@code autoResume}.
     */
    @JsonValue
    public Map<String, Object> fields() {
        return fields;
    }

    /** True when nothing would change. */
    public boolean isEmpty() {
        return fields.isEmpty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof LifecycleUpdate other && fields.equals(other.fields);
    }

    @Override
    public int hashCode() {
        return fields.hashCode();
    }

    @Override
    public String toString() {
        return "LifecycleUpdate" + fields;
    }

    /**
     * Builds a {@link LifecycleUpdate}. Each setter names one field; a null duration sets it to
     * never. Durations must be positive whole milliseconds; they are sent in the shortest exact
     * unit ({@code 500ms}, {@code 15s}, {@code 10m}, {@code 2h}, {@code 7d}).
     */
    public static final class Builder {
        private final Map<String, Object> fields = new LinkedHashMap<>();

        private Builder() {
        }

        /** Pause after this long idle; null: never pause. */
        public Builder pauseAfterIdle(Duration after) {
            return duration("pauseAfterIdle", after);
        }

        /** Go to standby (memory given back to the host) after this long idle; null: never. */
        public Builder standbyAfterIdle(Duration after) {
            return duration("standbyAfterIdle", after);
        }

        /** Hibernate after this long idle; null: never hibernate. */
        public Builder hibernateAfterIdle(Duration after) {
            return duration("hibernateAfterIdle", after);
        }

        /** Stop after this long idle; null: never stop. */
        public Builder stopAfterIdle(Duration after) {
            return duration("stopAfterIdle", after);
        }

        /** Delete after this long idle; null: never delete for idleness. */
        public Builder deleteAfterIdle(Duration after) {
            return duration("deleteAfterIdle", after);
        }

        /** At this age, busy or not, {@link #atMaxAge} (delete unless set); null: no age limit. */
        public Builder maxAge(Duration age) {
            return duration("maxAge", age);
        }

        /**
         * What {@link #maxAge} does: {@code "delete"}, or put the sandbox to sleep: {@code "pause"},
         * {@code "standby"}, {@code "hibernate"}, {@code "stop"} (E2B's pause at timeout).
         */
        public Builder atMaxAge(String step) {
            fields.put("atMaxAge", step);
            return this;
        }

        /** When a sandbox its age put to sleep wakes, its maxAge moves this far past its age then; null: the limit goes. */
        public Builder wakeFor(Duration extra) {
            return duration("wakeFor", extra);
        }

        /** Whether exec and file calls wake a paused or hibernated sandbox. */
        public Builder autoResume(boolean autoResume) {
            fields.put("autoResume", autoResume);
            return this;
        }

        public LifecycleUpdate build() {
            return new LifecycleUpdate(fields);
        }

        private Builder duration(String field, Duration value) {
            try {
                fields.put(field, value == null ? null : ApiDurations.format(value));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(field + ": " + e.getMessage(), e);
            }
            return this;
        }
    }
}
