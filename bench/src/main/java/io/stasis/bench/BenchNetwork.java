package io.stasis.bench;

import io.stasis.host.HostClaim;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The private service's network settings, derived from its scratch directory, so that it never
 * shares an nftables table, interface names, address range or preview port with a developer's
 * service (or a test's) on the same host, nor an NFLOG group. Its sandboxes may reach the benchmark's own upstream
 * host, a network namespace at {@link #upstreamAddress()} in 10.254.0.0/16 (where the tests' hosts
 * live too), which the service's resolver knows as {@link #UPSTREAM_NAME}.
 *
 * @param table           nftables table, {@code stasis_b} and two letters
 * @param interfacePrefix host ends of the sandbox links, {@code b} and the same two letters (no other
 *                        instance's prefix starts with {@code b}: the service's is {@code sx}, tests' {@code t..})
 * @param range           the sandbox links' range, a /20 in 10.192.0.0-10.234.63.255 (tests take 10.128-10.191)
 * @param upstreamSlot    N of the upstream host's {@code 10.254.N.0/30}, 1-250
 */
record BenchNetwork(String table, String interfacePrefix, String range, int upstreamSlot) {
    /** The upstream host's name, answered by the service's resolver (policies allow it by name). */
    static final String UPSTREAM_NAME = "upstream.bench.test";

    /**
     * Everything follows from the two letters, so two services with different tables never share
     * a range or an NFLOG group either (each is claimed host-wide, and a second claim is refused):
     * the letters' index picks a /20 of 10.192.0.0-10.234.63.255 (1,024 sandboxes) and the group.
     * The directory's hash picks the first index to try; one whose names a running service holds
     * (two of 676 meet often enough over a benchmark's services) gives way to the next free one.
     */
    static BenchNetwork forDataDir(Path dataDir) {
        int hash = dataDir.toAbsolutePath().toString().hashCode();
        int slot = 1 + Math.floorMod(hash / 7, 250);
        int first = Math.floorMod(hash, INDEXES);
        for (int i = 0; i < INDEXES; i++) {
            var network = atIndex((first + i) % INDEXES, slot);
            if (network.isFree()) return network;
        }
        throw new IllegalStateException("every one of the benchmark's " + INDEXES + " network layouts is in use on this host");
    }

    private static final int INDEXES = 26 * 26;

    private static BenchNetwork atIndex(int index, int slot) {
        String letters = "" + (char) ('a' + index % 26) + (char) ('a' + index / 26);
        String range = "10." + (192 + index / 16) + "." + (index % 16) * 16 + ".0/20";
        return new BenchNetwork("stasis_b" + letters, "b" + letters, range, slot);
    }

    /** Whether no running service claims its names now (the kinds are the service's flags, as it claims them). */
    private boolean isFree() {
        var names = Map.of("network-table", table, "network-interface-prefix", interfacePrefix, "network-range", range,
                "network-log-group", Integer.toString(logGroup()));
        return names.entrySet().stream().allMatch(name -> HostClaim.isFree(HostClaim.HOST_DIR, name.getKey(), name.getValue()));
    }

    /** The NFLOG group of its dropped-packet events: one reader per group on a host (tests take 20000-63263). */
    int logGroup() {
        int index = (table.charAt(table.length() - 2) - 'a') + 26 * (table.charAt(table.length() - 1) - 'a');
        return 10_000 + index;
    }

    /** The upstream host's address inside its namespace. */
    String upstreamAddress() {
        return "10.254." + upstreamSlot + ".2";
    }

    /** Flags of the service: the network's layout, the upstream's name, and a preview listener on a free port. */
    List<String> flags() {
        return List.of("--network-table", table, "--network-interface-prefix", interfacePrefix, "--network-range", range,
                "--network-allow-private", "10.254.0.0/16", "--dns-names", UPSTREAM_NAME + "=" + upstreamAddress(),
                "--preview-port", "0", "--network-log-group", Integer.toString(logGroup()));
    }
}
