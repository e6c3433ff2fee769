package io.stasis.network.linux.proxy;

import java.time.Duration;

/**
 * What one sandbox may hold open through the egress proxy.
 *
 * @param connectionsPerSandbox relayed connections a sandbox may have open at once; past it, a new one is refused
 *                              (an HTTP 403 or a TLS alert naming the rule {@code connection limit N}, audited as denied)
 * @param idleTimeout           a relayed connection through which no byte went either way this long is closed;
 *                              zero: never
 */
public record EgressLimits(int connectionsPerSandbox, Duration idleTimeout) {
    /** 256 connections a sandbox; 15 minutes idle (longer than the usual load balancers' 350 s-10 min, so keep-alive pools notice first). */
    public static final EgressLimits DEFAULTS = new EgressLimits(256, Duration.ofMinutes(15));

    public EgressLimits {
        if (connectionsPerSandbox < 1) throw new IllegalArgumentException("connectionsPerSandbox must be positive, was " + connectionsPerSandbox);
        if (idleTimeout.isNegative()) throw new IllegalArgumentException("idleTimeout must not be negative, was " + idleTimeout);
    }

    /** The rule a refusal past the connection limit names. */
    String connectionRule() {
        return "connection limit " + connectionsPerSandbox;
    }
}
