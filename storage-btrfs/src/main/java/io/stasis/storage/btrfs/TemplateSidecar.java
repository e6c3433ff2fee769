package io.stasis.storage.btrfs;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.spi.TemplateImage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;

/**
 * The JSON file next to a template subvolume ({@code templates/<name>.json}) that says which
 * recipe version it holds. Written to a temporary name, synced, then renamed: a reader sees the
 * old file or the new one, never half of one.
 */
record TemplateSidecar(String name, String version, String builtAt, long sizeBytes) {
    private static final ObjectMapper JSON = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    static TemplateSidecar of(TemplateImage image) {
        return new TemplateSidecar(image.name(), image.version(), image.builtAt().toString(), image.sizeBytes());
    }

    TemplateImage toImage() {
        return new TemplateImage(name, version, Instant.parse(builtAt), sizeBytes);
    }

    static TemplateSidecar read(Path file) throws IOException {
        return JSON.readValue(file.toFile(), TemplateSidecar.class);
    }

    /** Writes {@code temp} durably; {@link #publish} then moves it into place atomically. */
    void writeTo(Path temp) throws IOException {
        byte[] bytes = JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(this);
        try (var channel = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            var buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining()) channel.write(buffer);
            channel.force(true);
        }
    }

    static void publish(Path temp, Path target) throws IOException {
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
