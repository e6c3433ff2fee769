package io.stasis.core.lifecycle;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.Sandbox;

/**
 * Where a hibernated sandbox's image comes from when it is not on this node: one adopted from a
 * node that was lost, whose image is in the durable store. {@link #NONE} on a node that cannot
 * fetch (no shared store): such a resume fails, and the sandbox stays hibernated.
 */
@FunctionalInterface
public interface HibernationSource {
    HibernationSource NONE = (sandbox, image) -> {
        throw new IllegalStateException("hibernation image " + image + " of " + sandbox.id() + " is not on this node");
    };

    /** Makes {@code image} and the sandbox's root present here; close the result once the restore is done. */
    Fetched fetch(Sandbox sandbox, CheckpointId image);

    /** What was fetched for one restore: closing removes what only the restore needed. */
    interface Fetched extends AutoCloseable {
        Fetched NOTHING = () -> { };

        @Override
        void close();
    }
}
