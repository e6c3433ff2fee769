package io.stasis.runtime.runc;

import io.stasis.host.HelperFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The static helpers built from C by the Maven build (src/main/c) and shipped inside this jar:
 * {@value #INIT}, process 1 of every sandbox; {@value #REROOT}, which the host runs to give a
 * running sandbox a new root; {@value #NET}, which plugs a sandbox into its link (after a start,
 * and as runc's hook in a restore); {@value #CRIU}, runc's CRIU (see stasis-criu.c); {@value #TAR},
 * the {@code tar} CRIU saves and refills tmpfs mounts with (see stasis-tar.c); {@value #REAPER}, the parent
 * that reaps a gVisor sandbox's processes (see Runsc); {@value #SENTRY}, which stops and runs again a
 * gVisor sandbox's tasks and saves it through its sentry (see stasis-sentry.c). They are installed into the runtime's state
 * directory, which every sandbox mounts read-only.
 */
final class HelperBinary {
    static final String INIT = "stasis-init";
    static final String REROOT = "stasis-reroot";
    static final String NET = "stasis-net";
    static final String CRIU = "stasis-criu";
    static final String REAPER = "stasis-reaper";
    static final String TAR = "stasis-tar";
    static final String SENTRY = "stasis-sentry";

    private HelperBinary() {
    }

    /**
     * Installs {@value #TAR} into {@code dir} and, in its subdirectory {@code criu-path}, a link
     * {@code tar} to it; returns that subdirectory, which stasis-criu puts first on CRIU's PATH.
     */
    static Path installTarForCriu(Path dir) {
        Path tar = install(dir, TAR);
        Path path = dir.resolve("criu-path");
        Path link = path.resolve("tar");
        Path target = path.relativize(tar);
        try {
            Files.createDirectories(path);
            if (Files.isSymbolicLink(link) && Files.readSymbolicLink(link).equals(target)) return path;
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, target);
            return path;
        } catch (IOException e) {
            throw new UncheckedIOException("installing " + link, e);
        }
    }

    /** Installs the helper {@code name} into {@code dir} unless an identical one is there; returns its path. */
    static Path install(Path dir, String name) {
        return HelperFiles.install(HelperBinary.class, dir, name);
    }
}
