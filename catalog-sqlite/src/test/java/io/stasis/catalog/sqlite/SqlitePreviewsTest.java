package io.stasis.catalog.sqlite;

import static io.stasis.catalog.sqlite.TestSandboxes.T0;
import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The previews table: round trips, order, and that no preview outlives or precedes its sandbox. */
class SqlitePreviewsTest extends FreshCatalog {
    private static Preview privatePreview(SandboxId sandbox, int port, Instant at) {
        return new Preview(PreviewId.random(), sandbox, port, false, Optional.of("ab".repeat(32)), at, Optional.of(at.plusSeconds(60)));
    }

    @Test
    void roundTripsPrivateAndPublicPreviewsOldestFirst() {
        var sandbox = TestSandboxes.running(T0);
        catalog.insert(sandbox);
        var second = new Preview(PreviewId.random(), sandbox.id(), 65535, true, Optional.empty(), T0.plusNanos(1), Optional.empty());
        var first = privatePreview(sandbox.id(), 1, T0);

        assertThat(catalog.insertPreview(second)).isTrue();
        assertThat(catalog.insertPreview(first)).isTrue();

        assertThat(catalog.previewsOf(sandbox.id())).containsExactly(first, second);
        assertThat(catalog.findPreview(first.id())).contains(first);
        assertThat(catalog.findPreview(PreviewId.random())).isEmpty();
    }

    @Test
    void refusesAPreviewOfAMissingOrDeletingSandbox() {
        assertThat(catalog.insertPreview(privatePreview(SandboxId.random(), 80, T0))).isFalse();

        var deleting = TestSandboxes.running(T0);
        catalog.insert(deleting);
        catalog.update(deleting.withState(SandboxState.DELETED));
        assertThat(catalog.insertPreview(privatePreview(deleting.id(), 80, T0))).isFalse();
        assertThat(catalog.previewsOf(deleting.id())).isEmpty();
    }

    @Test
    void deletingASandboxDeletesItsPreviewsOnly() {
        var gone = TestSandboxes.running(T0);
        var kept = TestSandboxes.running(T0.plus(Duration.ofSeconds(1)));
        catalog.insert(gone);
        catalog.insert(kept);
        var goneOne = privatePreview(gone.id(), 3000, T0);
        var keptOne = privatePreview(kept.id(), 3000, T0);
        catalog.insertPreview(goneOne);
        catalog.insertPreview(keptOne);

        catalog.delete(gone.id());

        assertThat(catalog.findPreview(goneOne.id())).isEmpty();
        assertThat(catalog.previewsOf(kept.id())).containsExactly(keptOne);
    }

    @Test
    void deletePreviewIsIdempotent() {
        var sandbox = TestSandboxes.running(T0);
        catalog.insert(sandbox);
        var preview = privatePreview(sandbox.id(), 8080, T0);
        catalog.insertPreview(preview);

        catalog.deletePreview(preview.id());
        catalog.deletePreview(preview.id());

        assertThat(catalog.previewsOf(sandbox.id())).isEmpty();
    }
}
