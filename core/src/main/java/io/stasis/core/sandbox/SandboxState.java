package io.stasis.core.sandbox;

/**
 * Where a sandbox is in its life. Each state holds only what is true in it; switches over it are
 * exhaustive, so a new state cannot be forgotten by the code that handles states.
 */
public sealed interface SandboxState {
    /** The processes run and the root is mounted. */
    record Running() implements SandboxState {
    }

    /** No process runs; the root filesystem is kept. {@code reason} says how it got here. */
    record Stopped(String reason) implements SandboxState {
    }

    /** Being torn down, or gone; kept only while the teardown finishes. */
    record Deleted() implements SandboxState {
    }

    Running RUNNING = new Running();
    Deleted DELETED = new Deleted();

    /** The name on the wire and in the catalog. */
    default String wireName() {
        return switch (this) {
            case Running r -> "running";
            case Stopped s -> "stopped";
            case Deleted d -> "deleted";
        };
    }

    static SandboxState fromWire(String name, String reason) {
        return switch (name) {
            case "running" -> RUNNING;
            case "stopped" -> new Stopped(reason);
            case "deleted" -> DELETED;
            default -> throw new IllegalArgumentException("unknown sandbox state: " + name);
        };
    }
}
