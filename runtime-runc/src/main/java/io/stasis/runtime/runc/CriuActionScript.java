package io.stasis.runtime.runc;

import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The CRIU configuration every sandbox's bundle points at (annotation {@code org.criu.config}),
 * which names {@code stasis-net} as CRIU's action script. runc restores a sandbox into a fresh,
 * empty network namespace and with the hostname of the image: at {@code setup-namespaces}, before
 * any socket comes back, the loopback goes up and a sandbox with a network gets its link plugged
 * back ({@link VethPlug}); at {@code post-restore} the hostname the restore asked for is set. CRIU
 * may call a step more than once: each is idempotent. CRIU runs the script itself, once per step
 * (seven times a restore): a static binary costs a fraction of the shell script it replaced.
 *
 * <p>Where CRIU has nftables, the configuration also has it lock the sandbox's network with nftables
 * rather than with iptables (five {@code iptables-restore} runs): an idle sandbox's resume from
 * hibernation went from ~200 to ~140 ms here. CRIU records the method in the image, so images made
 * before keep theirs.
 */
final class CriuActionScript {
    /** Read by the script: the hostname a restored sandbox gets (a fork's differs from its parent's). */
    static final String HOSTNAME_VARIABLE = "STASIS_HOSTNAME";

    private CriuActionScript() {
    }

    /** Installs the configuration file naming the script; returns the configuration's path. */
    static Path install(Path stateDir, VethPlug plug, boolean nftablesLock) {
        String config = "action-script " + plug.binary() + "\n" + (nftablesLock ? "network-lock nftables\n" : "");
        return ScriptFiles.install(stateDir.resolve("criu.conf"), config, "r--r--r--");
    }

    /** Whether this CRIU can lock a network with nftables ({@code criu check --feature nftables}); false without CRIU. */
    static boolean nftablesLockSupported(Optional<Path> criu, Duration timeout) {
        if (criu.isEmpty()) return false;
        try {
            return ToolRunner.run(List.of(criu.get().toString(), "check", "--feature", "nftables"), timeout).exitCode() == 0;
        } catch (IOException | ToolRunner.TimedOut e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
