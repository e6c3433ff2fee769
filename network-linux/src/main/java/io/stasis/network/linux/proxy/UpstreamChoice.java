package io.stasis.network.linux.proxy;

import io.stasis.core.network.EgressDecision;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.network.linux.EgressGate;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;

/**
 * Where an allowed connection goes. The sandbox chose the destination address and the name
 * independently, and only the name was checked against the domain rules; so when a domain rule is
 * what allowed it, the proxy connects to where that name really leads (the original destination if
 * the resolver lists it, else the first resolved address, re-checked by the gate). A sandbox that
 * presents {@code allowed.com} to its own server's address is sent to {@code allowed.com} instead.
 *
 * <p>Two cases keep the original destination:
 * <ul>
 *   <li>no name (TLS without SNI, HTTP/1.0 without Host): the gate decided by the address itself;</li>
 *   <li>a {@code "default allow"} decision: the name matched no rule, and the same sandbox could reach
 *       the same address by presenting no name at all (then the address alone decides, and the default
 *       allows it). Pinning here would stop no one and would break sandboxes whose names resolve
 *       differently inside (an {@code /etc/hosts} entry, split DNS). Any other rule, including ones
 *       this class does not know, pins: the safe side.</li>
 * </ul>
 */
final class UpstreamChoice {
    static final String DEFAULT_ALLOW = "default allow";
    static final String UNRESOLVABLE = "blocked unresolvable name";

    private UpstreamChoice() {
    }

    sealed interface Outcome {
    }

    record Connect(InetSocketAddress upstream) implements Outcome {
    }

    record Refuse(String rule) implements Outcome {
    }

    static Outcome choose(EgressGate gate, NameResolver resolver, SandboxId sandbox, Optional<String> name,
                          EgressDecision decision, InetSocketAddress original) {
        if (name.isEmpty() || decision.rule().equals(DEFAULT_ALLOW)) return new Connect(original);
        List<InetAddress> resolved;
        try {
            resolved = resolver.resolve(name.get());
        } catch (IOException | RuntimeException e) {
            return new Refuse(UNRESOLVABLE);
        }
        if (resolved == null || resolved.isEmpty()) return new Refuse(UNRESOLVABLE);
        if (resolved.contains(original.getAddress())) return new Connect(original);
        // The original destination is IPv4 (SO_ORIGINAL_DST), so is the host's route to it: prefer IPv4.
        InetAddress target = resolved.stream().filter(a -> a instanceof Inet4Address).findFirst().orElse(resolved.getFirst());
        // The gate checked the sandbox's address, not this one: a name may resolve into a blocked range.
        EgressDecision again = gate.connection(sandbox, name, target);
        if (!again.allowed()) return new Refuse(again.rule());
        return new Connect(new InetSocketAddress(target, original.getPort()));
    }
}
