package io.stasis.core.spi;

import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.sandbox.SandboxId;
import java.util.List;
import java.util.Optional;

/** Previews of sandbox ports. Writes are atomic and durable when the call returns; thread-safe. */
public interface PreviewCatalog {
    /**
     * Records a preview, unless its sandbox is gone or being deleted (checked in the same
     * transaction, so no preview outlives its sandbox). Returns whether it was recorded.
     * {@link SandboxCatalog#delete} removes a sandbox's previews with it.
     */
    boolean insertPreview(Preview preview);

    Optional<Preview> findPreview(PreviewId id);

    /** A sandbox's previews, oldest first. */
    List<Preview> previewsOf(SandboxId sandbox);

    /** Forgets a preview. Idempotent. */
    void deletePreview(PreviewId id);
}
