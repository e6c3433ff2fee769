package io.stasis.runtime.runc;

import io.stasis.core.error.StasisException;
import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.ToolRunner;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Plugs a sandbox into its link: a veth pair whose host end gets the gateway address and whose
 * other end becomes eth0 inside the sandbox's network namespace, with its address, a default route
 * and IPv6 off. runc creates the namespace (docs/HOST.md: one made beforehand breaks exec and
 * CRIU), so the plug happens by process id after {@code runc run}, and during a restore from
 * CRIU's action script, before sockets come back. Both run the same script, {@code bin/net-plug}.
 */
final class VethPlug {
    /** The variable that hands the link to CRIU's action script: the script's arguments after the pid. */
    static final String LINK_VARIABLE = "STASIS_NET_LINK";

    private static final String SCRIPT = """
            #!/bin/sh
            # Installed by Stasis (see VethPlug.java): net-plug PID HOST_IF GATEWAY ADDRESS PREFIX [INHERITED]
            # Idempotent: CRIU may run its action script twice; the host end is recreated each time.
            PATH=/usr/sbin:/usr/bin:/sbin:/bin
            set -e
            pid=$1 host_if=$2 gateway=$3 address=$4 prefix=$5 inherited=$6
            # IPv6 off before the interface exists, so it never gets a link-local address.
            nsenter -t "$pid" -n sh -c 'echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6 && echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6'
            ip link del dev "$host_if" 2>/dev/null || true
            ip link add "$host_if" type veth peer name eth0 netns "$pid"
            ip -batch - <<EOF
            addr add $gateway/$prefix dev $host_if
            link set $host_if up
            EOF
            {
              echo "addr add $address/$prefix dev eth0"
              if [ -n "$inherited" ]; then echo "addr add $inherited/32 dev eth0"; fi
              echo "link set lo up"
              echo "link set eth0 up"
              echo "route add default via $gateway dev eth0"
            } | nsenter -t "$pid" -n ip -batch -
            """;

    private final Path script;
    private final Duration timeout;

    private VethPlug(Path script, Duration timeout) {
        this.script = script;
        this.timeout = timeout;
    }

    static VethPlug install(Path binDir, Duration timeout) {
        return new VethPlug(ScriptFiles.install(binDir.resolve("net-plug"), SCRIPT), timeout);
    }

    Path script() {
        return script;
    }

    /** The script's arguments after the pid, as CRIU's action script receives them in {@value #LINK_VARIABLE}. */
    static String arguments(NetworkAttachment link) {
        var args = new ArrayList<>(List.of(link.hostInterface(), link.gateway().getHostAddress(), link.address().getHostAddress(),
                Integer.toString(link.prefixLength())));
        link.inherited().ifPresent(a -> args.add(a.getHostAddress()));
        return String.join(" ", args);
    }

    /** Plugs the sandbox whose process 1 has host pid {@code initPid}. */
    void plug(SandboxId id, long initPid, NetworkAttachment link) {
        var argv = new ArrayList<>(List.of(script.toString(), Long.toString(initPid)));
        argv.addAll(List.of(arguments(link).split(" ")));
        try {
            var result = ToolRunner.run(argv, timeout);
            if (result.exitCode() != 0)
                throw StasisException.runtimeFailed(id.value(), "plug network " + link.hostInterface(), result.stderrTail(), null);
        } catch (IOException | ToolRunner.TimedOut e) {
            throw StasisException.runtimeFailed(id.value(), "plug network " + link.hostInterface(), e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw StasisException.runtimeFailed(id.value(), "plug network", "interrupted", e);
        }
    }
}
