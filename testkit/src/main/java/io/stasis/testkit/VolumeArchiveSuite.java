package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.StasisException;
import io.stasis.core.spi.VolumeArchive;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link VolumeArchive} must do: the content-addressed one of the server and the
 * in-memory fake. A backend's test extends this and supplies a fresh, empty archive per test.
 */
public abstract class VolumeArchiveSuite {
    @TempDir
    protected Path scratch;
    private VolumeArchive archive;

    /** A new, empty archive for one test. */
    protected abstract VolumeArchive newArchive();

    @BeforeEach
    void openArchive() {
        archive = newArchive();
    }

    private Path file(String name, int size, long seed) throws IOException {
        return Files.write(scratch.resolve(name), TestFiles.randomBytes(size, seed));
    }

    @Test
    void aStoredStreamComesBackIntoAFile() throws IOException {
        var source = file("stream", 2 << 20, 1);
        var stored = archive.putStream(source);
        assertThat(stored.bytes()).isEqualTo(2 << 20);
        assertThat(stored.newBytes()).isEqualTo(2 << 20);

        var target = scratch.resolve("back");
        Files.writeString(target, "something older, replaced");
        archive.getStream(stored.id(), target);
        assertThat(Files.readAllBytes(target)).isEqualTo(Files.readAllBytes(source));
    }

    @Test
    void theSameStreamAgainAddsNothing() throws IOException {
        var source = file("stream", 1 << 20, 2);
        var first = archive.putStream(source);
        try (var upload = archive.beginUpload()) {
            var second = upload.putStream(source);
            assertThat(second.id()).isEqualTo(first.id());
            assertThat(second.newBytes()).isZero();
            upload.putRecord("volume-syncs/vol_a/one", second.id().getBytes(StandardCharsets.UTF_8));
        }
        assertThat(archive.getRecord("volume-syncs/vol_a/one")).hasValueSatisfying(
                r -> assertThat(new String(r, StandardCharsets.UTF_8)).isEqualTo(first.id()));
    }

    @Test
    void aStreamNeverStoredCannotBeFetched() {
        assertThatThrownBy(() -> archive.getStream("f".repeat(64), scratch.resolve("none"))).isInstanceOf(StasisException.class);
    }

    @Test
    void recordsAreReplacedAndDeletedIdempotently() {
        assertThat(archive.getRecord("volume-syncs/vol_b/x")).isEmpty();
        archive.putRecord("volume-syncs/vol_b/x", "one".getBytes(StandardCharsets.UTF_8));
        archive.putRecord("volume-syncs/vol_b/x", "two".getBytes(StandardCharsets.UTF_8));
        assertThat(archive.getRecord("volume-syncs/vol_b/x")).hasValueSatisfying(
                r -> assertThat(new String(r, StandardCharsets.UTF_8)).isEqualTo("two"));
        archive.deleteRecord("volume-syncs/vol_b/x");
        archive.deleteRecord("volume-syncs/vol_b/x");
        assertThat(archive.getRecord("volume-syncs/vol_b/x")).isEmpty();
    }
}
