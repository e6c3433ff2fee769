package io.stasis.runtime.runc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/** Writes the runtime's small helper files (scripts, configs) atomically, and only when they changed. */
final class ScriptFiles {
    private ScriptFiles() {
    }

    static Path install(Path target, String content) {
        return install(target, content, "r-xr-xr-x");
    }

    static Path install(Path target, String content, String mode) {
        try {
            Files.createDirectories(target.getParent());
            if (Files.exists(target) && Files.readString(target).equals(content)) return target;
            Path tmp = Files.createTempFile(target.getParent(), "." + target.getFileName(), ".tmp");
            Files.writeString(tmp, content, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString(mode));
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            return target;
        } catch (IOException e) {
            throw new UncheckedIOException("installing " + target, e);
        }
    }
}
