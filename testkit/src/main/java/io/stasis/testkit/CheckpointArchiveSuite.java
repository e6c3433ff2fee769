package io.stasis.testkit;

import io.stasis.core.sandbox.RuntimeKind;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.blob.ManifestId;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointDescriptor;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.CheckpointArchive;
import io.stasis.core.tenant.TenantId;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link CheckpointArchive} must do: the blob-backed one of the server and the
 * in-memory fake. A backend's test extends this and supplies a fresh, empty archive per test.
 */
public abstract class CheckpointArchiveSuite {
    private CheckpointArchive archive;

    /** A new, empty archive for one test. */
    protected abstract CheckpointArchive newArchive();

    @BeforeEach
    void openArchive() {
        archive = newArchive();
    }

    private static byte[] readAll(InputStream in) {
        try (in) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A descriptor of a memory checkpoint whose own root layer and image are the given streams. */
    public static CheckpointDescriptor descriptor(CheckpointId id, ManifestId root, ManifestId image) {
        var layers = List.of(new CheckpointDescriptor.RootLayer(id, Optional.empty(), root, 4096));
        return new CheckpointDescriptor(id, TenantId.DEFAULT, SandboxId.random(), Optional.of("before-deploy"), true,
                Checkpoint.Purpose.USER, Instant.now().truncatedTo(ChronoUnit.MILLIS), "tiny", Resources.DEFAULT,
                Map.of("LANG", "C.UTF-8"), Map.of("owner", "suite"), LifecyclePolicy.DEFAULT,
                new NetworkPolicy(EgressPolicy.DENY_ALL), layers, Optional.of(image), 8192, 8192, List.of(), RuntimeKind.RUNC);
    }

    @Test
    void aStoredStreamReadsBackWhole() {
        byte[] content = TestFiles.randomBytes(3 << 20, 1);
        CheckpointArchive.Stored stored;
        try (var upload = archive.beginUpload()) {
            stored = upload.put(new ByteArrayInputStream(content));
        }
        assertThat(stored.logicalBytes()).isEqualTo(content.length);
        assertThat(stored.storedBytes()).isBetween(0L, (long) content.length * 2);
        assertThat(readAll(archive.open(stored.id()))).isEqualTo(content);
    }

    @Test
    void theSameContentHasTheSameIdAndIsStoredOnce() {
        byte[] content = TestFiles.randomBytes(1 << 20, 2);
        CheckpointArchive.Stored first;
        CheckpointArchive.Stored second;
        try (var upload = archive.beginUpload()) {
            first = upload.put(new ByteArrayInputStream(content));
        }
        try (var upload = archive.beginUpload()) {
            second = upload.put(new ByteArrayInputStream(content));
        }
        assertThat(second.id()).isEqualTo(first.id());
        assertThat(second.storedBytes()).isLessThan(first.storedBytes());
    }

    @Test
    void anEmptyStreamIsAStreamToo() {
        CheckpointArchive.Stored stored;
        try (var upload = archive.beginUpload()) {
            stored = upload.put(InputStream.nullInputStream());
        }
        assertThat(stored.logicalBytes()).isZero();
        assertThat(readAll(archive.open(stored.id()))).isEmpty();
    }

    @Test
    void aStreamNeverStoredIsNotFound() {
        var unknown = ManifestId.parse("e".repeat(64));
        assertThatThrownBy(() -> readAll(archive.open(unknown)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        try (var upload = archive.beginUpload()) {
            assertThatThrownBy(() -> upload.keep(unknown))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
        }
    }

    @Test
    void aDescriptorIsFoundListedAndDeleted() {
        var id = CheckpointId.random();
        CheckpointDescriptor written;
        String digest;
        try (var upload = archive.beginUpload()) {
            var root = upload.put(new ByteArrayInputStream(TestFiles.randomBytes(4096, 3)));
            var image = upload.put(new ByteArrayInputStream(TestFiles.randomBytes(8192, 4)));
            written = descriptor(id, root.id(), image.id());
            digest = upload.putDescriptor(written);
        }
        assertThat(digest).matches("sha256:[0-9a-f]{64}");
        assertThat(archive.descriptor(id)).contains(written);
        assertThat(archive.descriptors()).containsExactly(written);
        assertThat(archive.descriptor(CheckpointId.random())).isEmpty();

        archive.deleteDescriptor(id);
        archive.deleteDescriptor(id);
        assertThat(archive.descriptor(id)).isEmpty();
        assertThat(archive.descriptors()).isEmpty();
    }

    @Test
    void anIncrementalUploadKeepsWhatItBuildsOn() {
        ManifestId base;
        try (var upload = archive.beginUpload()) {
            base = upload.put(new ByteArrayInputStream(TestFiles.randomBytes(4096, 5))).id();
        }
        var id = CheckpointId.random();
        try (var upload = archive.beginUpload()) {
            upload.keep(base);
            var image = upload.put(new ByteArrayInputStream(TestFiles.randomBytes(1024, 6)));
            upload.putDescriptor(descriptor(id, base, image.id()));
        }
        assertThat(archive.descriptor(id)).isPresent();
        assertThat(readAll(archive.open(base))).hasSize(4096);
    }
}
