package io.stasis.runtime.runc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The CRIU configuration every sandbox's bundle points at (annotation {@code org.criu.config}),
 * and the action script it names. runc restores a sandbox into a fresh, empty network namespace
 * and with the hostname of the image: at {@code setup-namespaces}, before any socket comes back,
 * the script brings the loopback up; at {@code post-restore} it sets the hostname the restore asked
 * for. CRIU may call a step more than once, so each command is idempotent.
 */
final class CriuActionScript {
    /** Read by the script: the hostname a restored sandbox gets (a fork's differs from its parent's). */
    static final String HOSTNAME_VARIABLE = "STASIS_HOSTNAME";

    private static final String SCRIPT = """
            #!/bin/sh
            # Installed by Stasis: CRIU's action script for every sandbox (see CriuActionScript.java).
            PATH=/usr/sbin:/usr/bin:/sbin:/bin
            case "$CRTOOLS_SCRIPT_ACTION" in
            setup-namespaces)
                nsenter -t "$CRTOOLS_INIT_PID" -n ip link set lo up || exit 1
                ;;
            post-restore)
                # After CRIU has put back the image's hostname, before the processes run on.
                if [ -n "$%s" ]; then
                    nsenter -t "$CRTOOLS_INIT_PID" -u hostname "$%s" || exit 1
                fi
                ;;
            esac
            exit 0
            """.formatted(HOSTNAME_VARIABLE, HOSTNAME_VARIABLE);

    private CriuActionScript() {
    }

    /** Installs the script and the configuration file naming it; returns the configuration's path. */
    static Path install(Path stateDir) {
        try {
            Path bin = Files.createDirectories(stateDir.resolve("bin"));
            Path script = bin.resolve("criu-action");
            writeIfChanged(script, SCRIPT, "r-xr-xr-x");
            Path config = stateDir.resolve("criu.conf");
            writeIfChanged(config, "action-script " + script + "\n", "r--r--r--");
            return config;
        } catch (IOException e) {
            throw new UncheckedIOException("installing CRIU's action script into " + stateDir, e);
        }
    }

    private static void writeIfChanged(Path target, String content, String mode) throws IOException {
        if (Files.exists(target) && Files.readString(target).equals(content)) return;
        Path tmp = Files.createTempFile(target.getParent(), ".criu", ".tmp");
        Files.writeString(tmp, content, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString(mode));
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
