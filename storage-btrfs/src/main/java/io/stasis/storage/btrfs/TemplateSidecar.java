package io.stasis.storage.btrfs;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.spi.TemplateConfig;
import io.stasis.core.spi.TemplateImage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The JSON file next to a template subvolume ({@code templates/<name>.json}) that says which
 * recipe version it holds. Written to a temporary name, synced, then renamed: a reader sees the
 * old file or the new one, never half of one.
 */
record TemplateSidecar(String name, String version, String builtAt, long sizeBytes, String tenant, String from, Map<String, String> env,
                       String workdir, String user, List<String> cmd, String layerOf, TemplateConfig.Preboot preboot) {
    private static final ObjectMapper JSON = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
            .setSerializationInclusion(JsonInclude.Include.NON_NULL);

    static TemplateSidecar of(TemplateImage image) {
        var c = image.config();
        return new TemplateSidecar(image.name(), image.version(), image.builtAt().toString(), image.sizeBytes(), c.tenant().orElse(null),
                c.from().orElse(null), c.env().isEmpty() ? null : c.env(), c.workdir().orElse(null), c.user().orElse(null),
                c.cmd().orElse(null), c.layerOf().orElse(null), c.preboot().orElse(null));
    }

    TemplateImage toImage() {
        var config = new TemplateConfig(Optional.ofNullable(tenant), Optional.ofNullable(from), env == null ? Map.of() : env,
                Optional.ofNullable(workdir), Optional.ofNullable(user), Optional.ofNullable(cmd), Optional.ofNullable(layerOf),
                Optional.ofNullable(preboot));
        return new TemplateImage(name, version, Instant.parse(builtAt), sizeBytes, config);
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
