package io.stasis.catalog.sqlite;

import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** Sandbox records for tests, with every field set to something ordinary unless a test says otherwise. */
final class TestSandboxes {
    static final Instant T0 = Instant.parse("2026-03-01T12:00:00.123456789Z");

    private TestSandboxes() {
    }

    static Sandbox running(Instant createdAt) {
        return new Sandbox(SandboxId.random(), Optional.empty(), "tiny", SandboxState.RUNNING, createdAt,
                Resources.DEFAULT, Map.of(), Map.of());
    }

    static Sandbox named(String name) {
        return new Sandbox(SandboxId.random(), Optional.of(name), "tiny", SandboxState.RUNNING, T0,
                Resources.DEFAULT, Map.of(), Map.of());
    }

    static Sandbox withMetadata(Instant createdAt, Map<String, String> metadata) {
        return new Sandbox(SandboxId.random(), Optional.empty(), "tiny", SandboxState.RUNNING, createdAt,
                Resources.DEFAULT, Map.of(), metadata);
    }
}
