package io.stasis.runtime.runc;

import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.SandboxId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Plugs a sandbox into its link: a veth pair whose host end gets the gateway address and whose
 * other end becomes eth0 inside the sandbox's network namespace, with its address, a default route
 * and IPv6 off. runc creates the namespace (docs/HOST.md: one made beforehand breaks exec and
 * CRIU), so the plug happens by process id after {@code runc run}, and during a restore from
 * runc's prestart hook, once CRIU has made the namespaces and before sockets come back. Both run
 * {@code stasis-net} (src/main/c), the only program that does it: it talks rtnetlink itself, in
 * one process. The service's own calls take one started ahead ({@link HelperAhead}): they are on
 * the path of a create, and of every gVisor start and restore.
 */
final class VethPlug implements AutoCloseable {
    private final Path binary;
    private final HelperAhead helper;
    private final Duration timeout;

    private VethPlug(Path binary, Duration timeout) {
        this.binary = binary;
        this.helper = new HelperAhead(binary);
        this.timeout = timeout;
    }

    @Override
    public void close() {
        helper.close();
    }

    static VethPlug install(Path binDir, Duration timeout) {
        return new VethPlug(HelperBinary.install(binDir, HelperBinary.NET), timeout);
    }

    /**
     * The prestart hook of a restore: loopback up in the restored sandbox and, with a link, the
     * plug, before any socket comes back (runc gives the hook the sandbox's pid on stdin).
     */
    List<String> restoreHook(Optional<NetworkAttachment> link) {
        var argv = new ArrayList<>(List.of(binary.toString(), "restore-hook"));
        link.ifPresent(l -> argv.addAll(arguments(l)));
        return argv;
    }

    /** The plug's arguments after the pid. */
    private static List<String> arguments(NetworkAttachment link) {
        var args = new ArrayList<>(List.of(link.hostInterface(), link.gateway().getHostAddress(), link.address().getHostAddress(),
                Integer.toString(link.prefixLength())));
        link.inherited().ifPresent(a -> args.add(a.getHostAddress()));
        return args;
    }

    /** Plugs the sandbox whose process 1 has host pid {@code initPid}. */
    void plug(SandboxId id, long initPid, NetworkAttachment link) {
        plug(id, Long.toString(initPid), link);
    }

    /**
     * A new network namespace, bound at {@code netns} (a new file), plugged into {@code link}: for
     * gVisor, whose sentry takes the interfaces of the namespace it starts in. Released with
     * {@link #release}; on failure nothing is left bound.
     */
    void plugNew(SandboxId id, Path netns, NetworkAttachment link) {
        var args = new ArrayList<>(List.of("netns-plug", netns.toString()));
        args.addAll(arguments(link));
        try {
            helper.run(id, "make and plug a network namespace", args, timeout); // one process where two were
        } catch (RuntimeException e) {
            try {
                release(id, netns);
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /** The namespace file of {@link #plugNew} unbound and removed, if there: the namespace lives on in what runs in it. */
    void release(SandboxId id, Path netns) {
        helper.run(id, "release network namespace", List.of("release", netns.toString()), timeout);
    }

    /** What runs runsc where it accepts a networked sandbox: the helper masks /proc/sys/net, then runs the rest of the line. */
    List<String> sysnetMasked() {
        return List.of(binary.toString(), "sysnet-masked");
    }

    private void plug(SandboxId id, String namespace, NetworkAttachment link) {
        var args = new ArrayList<>(List.of("plug", namespace));
        args.addAll(arguments(link));
        helper.run(id, "plug network " + link.hostInterface(), args, timeout);
    }
}
