package io.stasis.core.checkpoint;

import io.stasis.core.blob.ManifestId;
import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.IdlePolicy;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything another instance needs to restore a durable checkpoint, stored next to its streams
 * under a key derived from the checkpoint id and written last: no descriptor, no durable checkpoint.
 *
 * @param sandbox      the sandbox it was taken of (on the instance that took it)
 * @param roots        the root snapshot streams to receive in order, oldest first: a full stream,
 *                     then incremental ones, each against the one before; the last is this checkpoint's
 * @param image        the process image's stream, for a memory checkpoint
 * @param logicalBytes bytes of this checkpoint's own streams (its root layer and image) before dedup
 * @param storedBytes  bytes its upload added to the store (after dedup and compression)
 * @param buckets      the sandbox's bucket mounts (secret names only): a restore mounts them again with the
 *                     restoring tenant's secrets of those names
 * @param runtime      the sandbox's runtime, which a restore keeps (an image restores only there)
 */
public record CheckpointDescriptor(CheckpointId checkpoint, TenantId tenant, SandboxId sandbox, Optional<String> name,
                                   boolean memory, Checkpoint.Purpose purpose, Instant createdAt, String template,
                                   Resources resources, Map<String, String> env, Map<String, String> metadata,
                                   LifecyclePolicy lifecycle, NetworkPolicy network, List<RootLayer> roots,
                                   Optional<ManifestId> image, long logicalBytes, long storedBytes,
                                   List<SandboxBucket> buckets, RuntimeKind runtime) {

    /**
     * The newest format version this reads; a reader refuses newer ones. 2 adds bucket mounts and is
     * written only by descriptors that have some, so that a reader knowing only 1 refuses them
     * rather than restore a sandbox without its buckets. 3 adds the runtime and is written only by
     * descriptors of a runtime other than runc, which a reader knowing less must not restore into runc.
     * 4 adds what the age limit does ({@code atMaxAge}, {@code wakeFor}) and is written only when it
     * does not delete: a reader knowing less would delete the sandbox its lifecycle means to keep.
     */
    public static final int VERSION = 4;

    /** The version a descriptor is written with: the oldest that holds everything it has. */
    public int formatVersion() {
        if (lifecycle.atMaxAge() != IdlePolicy.Action.DELETE || lifecycle.wakeFor().isPresent()) return 4;
        if (runtime != RuntimeKind.RUNC) return 3;
        return buckets.isEmpty() ? 1 : 2;
    }

    /** One root snapshot stream: the snapshot of {@code checkpoint}, incremental to {@code parent} if present. */
    public record RootLayer(CheckpointId checkpoint, Optional<CheckpointId> parent, ManifestId stream, long bytes) {
        public RootLayer {
            Objects.requireNonNull(checkpoint);
            Objects.requireNonNull(parent);
            Objects.requireNonNull(stream);
        }
    }

    public CheckpointDescriptor {
        Objects.requireNonNull(checkpoint);
        Objects.requireNonNull(tenant);
        Objects.requireNonNull(sandbox);
        Objects.requireNonNull(name);
        Objects.requireNonNull(purpose);
        Objects.requireNonNull(createdAt);
        Objects.requireNonNull(template);
        Objects.requireNonNull(resources);
        Objects.requireNonNull(lifecycle);
        Objects.requireNonNull(network);
        Objects.requireNonNull(image);
        Objects.requireNonNull(runtime);
        env = Map.copyOf(env);
        metadata = Map.copyOf(metadata);
        roots = List.copyOf(roots);
        buckets = List.copyOf(buckets);
        if (roots.isEmpty() || !roots.getLast().checkpoint().equals(checkpoint))
            throw new IllegalArgumentException("the last root layer of " + checkpoint + " must be its own");
        if (memory != image.isPresent()) throw new IllegalArgumentException("a memory checkpoint has an image, a files-only one has none");
    }

    /** The blob key of a checkpoint's descriptor. */
    public static String key(CheckpointId id) {
        return "checkpoints/" + id.value() + ".json";
    }
}
