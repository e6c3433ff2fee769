package io.stasis.runtime.runc;

import java.nio.file.Path;

/**
 * The CRIU configuration every sandbox's bundle points at (annotation {@code org.criu.config}),
 * and the action script it names. runc restores a sandbox into a fresh, empty network namespace
 * and with the hostname of the image: at {@code setup-namespaces}, before any socket comes back,
 * the script brings the loopback up; at {@code post-restore} it sets the hostname the restore asked
 * for. A sandbox with a network gets its link plugged back at {@code setup-namespaces} too (see
 * {@link VethPlug}). CRIU may call a step more than once, so each command is idempotent.
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
                if [ -n "$%1$s" ]; then
                    %3$s "$CRTOOLS_INIT_PID" $%1$s || exit 1
                fi
                ;;
            post-restore)
                # After CRIU has put back the image's hostname, before the processes run on.
                if [ -n "$%2$s" ]; then
                    nsenter -t "$CRTOOLS_INIT_PID" -u hostname "$%2$s" || exit 1
                fi
                ;;
            esac
            exit 0
            """;

    private CriuActionScript() {
    }

    /** Installs the script and the configuration file naming it; returns the configuration's path. */
    static Path install(Path stateDir, VethPlug plug) {
        Path script = ScriptFiles.install(stateDir.resolve("bin").resolve("criu-action"),
                SCRIPT.formatted(VethPlug.LINK_VARIABLE, HOSTNAME_VARIABLE, plug.script()));
        return ScriptFiles.install(stateDir.resolve("criu.conf"), "action-script " + script + "\n", "r--r--r--");
    }
}
