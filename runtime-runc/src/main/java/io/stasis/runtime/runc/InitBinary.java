package io.stasis.runtime.runc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;

/**
 * The stasis-init binary, built from C by the Maven build and shipped inside this jar. It is
 * installed once into the runtime's state directory, which every sandbox mounts read-only.
 */
final class InitBinary {
    private static final String RESOURCE = "stasis-init";

    private InitBinary() {
    }

    /** Installs the binary into {@code dir} unless an identical one is there; returns its path. */
    static Path install(Path dir) {
        try (InputStream in = InitBinary.class.getResourceAsStream(RESOURCE)) {
            if (in == null) throw new IllegalStateException("stasis-init is missing from the runtime jar: was it built with gcc?");
            byte[] bytes = in.readAllBytes();
            Files.createDirectories(dir);
            Path target = dir.resolve(RESOURCE);
            if (Files.exists(target) && Arrays.equals(Files.readAllBytes(target), bytes)) return target;
            Path tmp = Files.createTempFile(dir, ".stasis-init", ".tmp");
            Files.write(tmp, bytes);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("r-xr-xr-x"));
            // A rename keeps running sandboxes on the old inode, which their mount still holds.
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("installing stasis-init into " + dir, e);
        }
    }
}
