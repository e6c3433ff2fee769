package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.checkpoint.CheckpointId;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The image stream: what goes out comes back byte for byte, sealed; a damaged stream leaves no image. */
class ImageStoreTest {
    @TempDir
    Path from;
    @TempDir
    Path to;

    @Test
    void anExportedImageImportsIdenticallyAndSealed() throws IOException {
        var source = new ImageStore(from);
        var id = CheckpointId.random();
        Path dir = source.create(id);
        byte[] pages = new byte[3 << 20];
        new Random(7).nextBytes(pages);
        Files.write(dir.resolve("pages-1.img"), pages);
        Files.writeString(dir.resolve("inventory.img"), "inv");
        Files.write(dir.resolve("empty.img"), new byte[0]);
        long size = source.seal(id);

        byte[] stream = source.exportTo(id, in -> in.readAllBytes());
        var target = new ImageStore(to);
        assertThat(target.importFrom(id, new ByteArrayInputStream(stream))).isEqualTo(size);
        assertThat(target.isComplete(id)).isTrue();
        assertThat(Files.readAllBytes(target.dir(id).resolve("pages-1.img"))).isEqualTo(pages);
        assertThat(Files.readString(target.dir(id).resolve("inventory.img"))).isEqualTo("inv");
        assertThat(Files.size(target.dir(id).resolve("empty.img"))).isZero();
    }

    @Test
    void aTruncatedStreamLeavesNoImage() throws IOException {
        var source = new ImageStore(from);
        var id = CheckpointId.random();
        Files.writeString(source.create(id).resolve("pages-1.img"), "x".repeat(10_000));
        source.seal(id);
        byte[] stream = source.exportTo(id, in -> in.readAllBytes());
        var target = new ImageStore(to);
        var cut = new ByteArrayInputStream(Arrays.copyOf(stream, stream.length / 2));
        assertThatThrownBy(() -> target.importFrom(id, cut)).isInstanceOf(EOFException.class);
        assertThat(target.isComplete(id)).isFalse();
        assertThat(target.list()).isEmpty();
        assertThatThrownBy(() -> target.importFrom(id, new ByteArrayInputStream("not an image".getBytes())))
                .hasMessageContaining("not a stasis CRIU image stream");
    }

    @Test
    void anIncompleteImageIsNotExported() throws IOException {
        var store = new ImageStore(from);
        var id = CheckpointId.random();
        store.create(id);
        assertThatThrownBy(() -> store.exportTo(id, in -> in.readAllBytes())).hasMessageContaining("incomplete");
    }
}
