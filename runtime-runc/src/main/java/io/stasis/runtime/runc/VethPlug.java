package io.stasis.runtime.runc;

import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Plugs a sandbox into its link: a veth pair whose host end gets the gateway address and whose
 * other end becomes eth0 inside the sandbox's network namespace, with its address, a default route
 * and IPv6 off. runc creates the namespace (docs/HOST.md: one made beforehand breaks exec and
 * CRIU), so the plug happens by process id after {@code runc run}, and during a restore from
 * CRIU's action script, before sockets come back. Both run {@code stasis-net} (src/main/c), the
 * only program that does it: it talks rtnetlink itself, in one process.
 */
final class VethPlug {
    /** The variable that hands the link to CRIU's action script: the plug's arguments after the pid. */
    static final String LINK_VARIABLE = "STASIS_NET_LINK";

    private final Path binary;
    private final Duration timeout;

    private VethPlug(Path binary, Duration timeout) {
        this.binary = binary;
        this.timeout = timeout;
    }

    static VethPlug install(Path binDir, Duration timeout) {
        return new VethPlug(HelperBinary.install(binDir, HelperBinary.NET), timeout);
    }

    /** The helper, which is CRIU's action script too (see {@link CriuActionScript}). */
    Path binary() {
        return binary;
    }

    /** The plug's arguments after the pid, as CRIU's action script receives them in {@value #LINK_VARIABLE}. */
    static String arguments(NetworkAttachment link) {
        var args = new ArrayList<>(List.of(link.hostInterface(), link.gateway().getHostAddress(), link.address().getHostAddress(),
                Integer.toString(link.prefixLength())));
        link.inherited().ifPresent(a -> args.add(a.getHostAddress()));
        return String.join(" ", args);
    }

    /** Plugs the sandbox whose process 1 has host pid {@code initPid}. */
    void plug(SandboxId id, long initPid, NetworkAttachment link) {
        var argv = new ArrayList<>(List.of(binary.toString(), "plug", Long.toString(initPid)));
        argv.addAll(List.of(arguments(link).split(" ")));
        HelperBinary.run(id, "plug network " + link.hostInterface(), argv, timeout);
    }
}
