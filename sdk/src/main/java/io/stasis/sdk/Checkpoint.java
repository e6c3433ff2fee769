package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonValue;
import java.time.Instant;
import java.util.List;

/**
 * A checkpoint of a sandbox, as last fetched, with methods that act on it.
 *
 * <pre>{@code
 * Checkpoint before = sandbox.checkpoint("before-tests", true);  // memory: processes keep running
 * List<Sandbox> tries = before.fork(3);                           // three copies of that moment
 * before.delete();                                                // the forks keep their roots
 * }</pre>
 */
public final class Checkpoint {
    private final CheckpointInfo info;
    private final HttpTransport transport;

    Checkpoint(CheckpointInfo info, HttpTransport transport) {
        this.info = info;
        this.transport = transport;
    }

    /** The wire data. */
    @JsonValue
    public CheckpointInfo info() {
        return info;
    }

    /** {@code ckpt_...} */
    public String id() {
        return info.id();
    }

    /** The sandbox it was taken of. */
    public String sandboxId() {
        return info.sandboxId();
    }

    /** The caller's name for it, or null. */
    public String name() {
        return info.name();
    }

    /** True when it holds the processes and their memory, false for a files-only checkpoint. */
    public boolean hasMemory() {
        return info.memory();
    }

    /** {@code user} or {@code fork}. */
    public String purpose() {
        return info.purpose();
    }

    /** True once it is in the blob store (restorable on any instance sharing it), as last fetched. */
    public boolean durable() {
        return info.durable();
    }

    /** {@code none}, {@code pending}, {@code durable} or {@code failed}, as last fetched. */
    public String uploadState() {
        return info.upload();
    }

    /** Once durable: what its upload added to the blob store after dedup and compression; else null. */
    public Long storedBytes() {
        return info.storedBytes();
    }

    /** Once durable: its streams' bytes before dedup; else null. */
    public Long logicalBytes() {
        return info.logicalBytes();
    }

    /** The process image's size (0 without memory). */
    public long sizeBytes() {
        return info.sizeBytes();
    }

    public Instant createdAt() {
        return info.createdAt();
    }

    /**
     * Forks the sandbox from this checkpoint {@code count} times (1..100); each fork gets its own
     * root and, for a memory checkpoint, the restored processes. All or nothing.
     */
    public List<Sandbox> fork(int count) {
        return new SandboxCalls(transport, info.sandboxId())
                .fork(ForkRequest.builder().checkpoint(info.id()).count(count).build());
    }

    /** Forks of it kept restored ahead: wanted and ready, as of when this object was read (0 and 0 without). */
    public CheckpointInfo.Spares spares() {
        return info.spares() == null ? new CheckpointInfo.Spares(0, 0) : info.spares();
    }

    /**
     * Keeps {@code count} forks of this memory checkpoint restored ahead, in standby, so that a
     * fork of it only thaws one (0 ends them); returns the checkpoint as it is now. They are
     * restored in the background: see {@link #spares()} of a later {@link Checkpoints#get}.
     */
    public Checkpoint keepSpares(int count) {
        return Checkpoints.keepSpares(transport, info.id(), count);
    }

    /** Deletes the checkpoint; sandboxes forked from it keep their roots. */
    public void delete() {
        Checkpoints.delete(transport, info.id());
    }

    @Override
    public String toString() {
        return "Checkpoint[" + info.id() + (info.name() == null ? "" : " " + info.name()) + " of " + info.sandboxId()
                + (info.memory() ? ", memory" : ", files") + "]";
    }
}
