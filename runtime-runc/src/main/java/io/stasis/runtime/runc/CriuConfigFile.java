package io.stasis.runtime.runc;

import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The CRIU configuration every sandbox's bundle points at (annotation {@code org.criu.config}).
 * Where CRIU has nftables, it has CRIU lock the sandbox's network with nftables rather than with
 * iptables (five {@code iptables-restore} runs): an idle sandbox's resume from hibernation went
 * from ~200 to ~140 ms here. CRIU records the method in the image, so images made before keep
 * theirs.
 *
 * <p>It names no action script. One used to plug the restored sandbox's link and set a fork's
 * hostname, but CRIU runs it at each of seven steps of a restore (and four of a dump), a fork of
 * CRIU each, five of them with nothing to do: runc's prestart hook plugs the link now (see
 * {@link VethPlug#restoreHook}), and a fork's hostname is in the image it restores from (see
 * {@link UtsnsImage}).
 */
final class CriuConfigFile {
    private CriuConfigFile() {
    }

    /** Installs the configuration file; returns its path. */
    static Path install(Path stateDir, boolean nftablesLock) {
        return ScriptFiles.install(stateDir.resolve("criu.conf"), nftablesLock ? "network-lock nftables\n" : "", "r--r--r--");
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
