package io.stasis.core.sandbox;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/** A sandbox as the catalog records it. Immutable; state changes produce a new record. */
public record Sandbox(
        SandboxId id,
        Optional<String> name,
        String template,
        SandboxState state,
        Instant createdAt,
        Resources resources,
        Map<String, String> env,
        Map<String, String> metadata) {

    public Sandbox {
        Objects.requireNonNull(id);
        Objects.requireNonNull(name);
        Objects.requireNonNull(template);
        Objects.requireNonNull(state);
        Objects.requireNonNull(createdAt);
        Objects.requireNonNull(resources);
        env = Map.copyOf(env);
        metadata = Map.copyOf(metadata);
    }

    public Sandbox withState(SandboxState newState) {
        return new Sandbox(id, name, template, newState, createdAt, resources, env, metadata);
    }

    /** How the sandbox is shown in messages: its name if it has one, else its id. */
    public String label() {
        return name.map(n -> n + " (" + id + ")").orElse(id.value());
    }
}
