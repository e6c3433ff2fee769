package io.stasis.runtime.runc;

import java.nio.file.Path;

/**
 * The CRIU configuration every sandbox's bundle points at (annotation {@code org.criu.config}),
 * which names {@code stasis-net} as CRIU's action script. runc restores a sandbox into a fresh,
 * empty network namespace and with the hostname of the image: at {@code setup-namespaces}, before
 * any socket comes back, the loopback goes up and a sandbox with a network gets its link plugged
 * back ({@link VethPlug}); at {@code post-restore} the hostname the restore asked for is set. CRIU
 * may call a step more than once: each is idempotent. CRIU runs the script itself, once per step
 * (seven times a restore): a static binary costs a fraction of the shell script it replaced.
 */
final class CriuActionScript {
    /** Read by the script: the hostname a restored sandbox gets (a fork's differs from its parent's). */
    static final String HOSTNAME_VARIABLE = "STASIS_HOSTNAME";

    private CriuActionScript() {
    }

    /** Installs the configuration file naming the script; returns the configuration's path. */
    static Path install(Path stateDir, VethPlug plug) {
        return ScriptFiles.install(stateDir.resolve("criu.conf"), "action-script " + plug.binary() + "\n", "r--r--r--");
    }
}
