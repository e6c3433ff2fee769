package io.stasis.host;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;

/**
 * The static helper programs an adapter builds from C (its src/main/c) and ships inside its jar,
 * beside the class that runs them, installed as files the host can execute.
 */
public final class HelperFiles {
    private HelperFiles() {
    }

    /**
     * Installs the helper {@code name}, a resource beside {@code owner}, into {@code dir} unless an
     * identical one is there; returns its path. A helper missing from the jar is a build without gcc.
     */
    public static Path install(Class<?> owner, Path dir, String name) {
        try (InputStream in = owner.getResourceAsStream(name)) {
            if (in == null) throw new IllegalStateException(name + " is missing from the jar of " + owner.getName() + ": was it built with gcc?");
            byte[] bytes = in.readAllBytes();
            Files.createDirectories(dir);
            Path target = dir.resolve(name);
            if (Files.exists(target) && Arrays.equals(Files.readAllBytes(target), bytes)) return target;
            Path tmp = Files.createTempFile(dir, "." + name, ".tmp");
            Files.write(tmp, bytes);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("r-xr-xr-x"));
            // A rename keeps what runs on the old inode (a sandbox's mount of it, a daemon) on that inode.
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("installing " + name + " into " + dir, e);
        }
    }
}
