package io.stasis.network.linux;

import io.stasis.core.network.Cidr;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * How this host's sandbox networks are laid out.
 *
 * @param range           the IPv4 range sandbox links take their addresses from, a /30 each
 * @param interfacePrefix the host ends of the links are named prefix + slot; must not be a prefix of another
 *                        Stasis instance's on the same host (the rules match interfaces by prefix)
 * @param table           the nftables table (family ip) holding every rule of this instance
 * @param allowedPrivate  private ranges (RFC 1918, CGNAT) that policies may open; all others stay blocked
 * @param toolTimeout     how long an {@code nft} run may take
 * @param logGroup        the NFLOG group the filter logs dropped packets to, for {@code network.denied} events; one
 *                        process per host can read a group, so each Stasis instance on a host needs its own
 * @param routedConnections flows a sandbox may have open at once that its policy lets through without the egress
 *                        proxy (allowed networks, names' addresses on other ports, a default of allow): TCP
 *                        connections and UDP flows as conntrack counts them; a new one past it is dropped and
 *                        logged as {@code connection limit N}
 * @param bandwidth       what each sandbox may send and receive, in bits per second
 */
public record NetworkConfig(Cidr range, String interfacePrefix, String table, List<Cidr> allowedPrivate, Duration toolTimeout,
                            int logGroup, int routedConnections, Bandwidth bandwidth) {
    /**
     * A sandbox's rates, each direction policed on its link (packets past the rate are dropped,
     * and TCP backs off), whether they go through the egress proxy or are routed.
     *
     * @param egressBitsPerSecond  what it sends; 0: no limit, else at least {@link #MIN_BITS_PER_SECOND}
     * @param ingressBitsPerSecond what it receives; 0: no limit, else at least {@link #MIN_BITS_PER_SECOND}
     */
    public record Bandwidth(long egressBitsPerSecond, long ingressBitsPerSecond) {
        public static final Bandwidth UNLIMITED = new Bandwidth(0, 0);
        /** The lowest rate: the policer's bucket (one second of it) must hold a whole GSO packet (64 KiB on a veth), else it drops every one. */
        public static final long MIN_BITS_PER_SECOND = 1_000_000;

        public Bandwidth {
            for (long rate : new long[] {egressBitsPerSecond, ingressBitsPerSecond})
                if (rate != 0 && rate < MIN_BITS_PER_SECOND)
                    throw new IllegalArgumentException("a bandwidth must be 0 (no limit) or at least 1mbit, was " + rate + " bit/s");
        }
    }

    /** The NFLOG group unless configured otherwise. */
    public static final int DEFAULT_LOG_GROUP = 7601;
    /** Routed flows per sandbox unless configured otherwise: as many as the egress proxy's connections. */
    public static final int DEFAULT_ROUTED_CONNECTIONS = 256;

    public NetworkConfig {
        Objects.requireNonNull(range);
        if (!range.isIpv4() || range.prefix() > 28)
            throw new IllegalArgumentException("the sandbox network range must be IPv4 and hold several /30s: " + range);
        if (!interfacePrefix.matches("[a-z][a-z0-9]{0,5}"))
            throw new IllegalArgumentException("interface prefix must be 1-6 lowercase letters or digits, starting with a letter: " + interfacePrefix);
        if (!table.matches("[a-z][a-z0-9_]{0,30}"))
            throw new IllegalArgumentException("nftables table name must be lowercase letters, digits, underscores: " + table);
        allowedPrivate = List.copyOf(allowedPrivate);
        if (logGroup < 0 || logGroup > 65535) throw new IllegalArgumentException("NFLOG group must be 0..65535: " + logGroup);
        if (routedConnections < 1) throw new IllegalArgumentException("routed connections must be positive: " + routedConnections);
        Objects.requireNonNull(bandwidth);
    }

    /** With the default limit of routed flows and no bandwidth limit. */
    public NetworkConfig(Cidr range, String interfacePrefix, String table, List<Cidr> allowedPrivate, Duration toolTimeout, int logGroup) {
        this(range, interfacePrefix, table, allowedPrivate, toolTimeout, logGroup, DEFAULT_ROUTED_CONNECTIONS, Bandwidth.UNLIMITED);
    }

    public NetworkConfig withRoutedConnections(int limit) {
        return new NetworkConfig(range, interfacePrefix, table, allowedPrivate, toolTimeout, logGroup, limit, bandwidth);
    }

    public NetworkConfig withBandwidth(Bandwidth rates) {
        return new NetworkConfig(range, interfacePrefix, table, allowedPrivate, toolTimeout, logGroup, routedConnections, rates);
    }

    /** With the default NFLOG group. */
    public NetworkConfig(Cidr range, String interfacePrefix, String table, List<Cidr> allowedPrivate, Duration toolTimeout) {
        this(range, interfacePrefix, table, allowedPrivate, toolTimeout, DEFAULT_LOG_GROUP);
    }

    public static NetworkConfig defaults() {
        return new NetworkConfig(Cidr.parse("10.200.0.0/16", "range"), "sx", "stasis", List.of(), Duration.ofSeconds(10));
    }
}
