package io.stasis.server;

import io.stasis.host.HostClaim;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Network flags of a test service, one set per data directory for the life of the test JVM, so
 * that a restarted service gets the same ones (the NFLOG group too) and services alive at the same
 * time on this host use their own nftables table, interface names, address range and log group.
 * A set is picked from the data directory's hash, skipping any set with a name another live
 * service has claimed on this host (in this JVM or another): the hash alone gave two live
 * services the same table once in a few hundred runs. A service's claims end with it, but its
 * sandboxes, their addresses and its table outlive a kill until the test starts it again; so the
 * test JVM also reserves the set's names host-wide for as long as the data directory exists.
 * Without that, a test in another JVM took the range of a fault suite's killed service between
 * two of its starts: its sandboxes shared addresses with the killed one's, and the restart was
 * refused. Test hosts (see TestNetnsHost) live in 10.254.0.0/16, which these services let
 * policies open.
 */
final class TestNetworkFlags {
    private TestNetworkFlags() {
    }

    /** The tests' S3 servers (s3proxy) listen on loopback, which bucket mounts may not reach unless opened. */
    static final List<String> BUCKET_ENDPOINTS = List.of("--bucket-endpoints-allow", "127.0.0.0/8");

    private static final int LETTER_PAIRS = 26 * 26;
    private static final int RANGES = 64;
    private static final int SETS = LETTER_PAIRS * RANGES;
    private static final Map<Path, Integer> ASSIGNED = new ConcurrentHashMap<>();
    /** The names this JVM reserves, per data directory, until that directory is gone. */
    private static final Map<Path, List<HostClaim>> RESERVED = new ConcurrentHashMap<>();
    private static final String RESERVATION = "test-network";

    static synchronized List<String> forDataDir(Path dataDir) {
        releaseGone();
        return flags(ASSIGNED.computeIfAbsent(dataDir.toAbsolutePath(), TestNetworkFlags::freeSet));
    }

    /**
     * The first set after the directory's hash that no live service holds a name of; sets sharing
     * no name with one handed out earlier in this JVM come first, as that directory may start again.
     */
    private static int freeSet(Path dataDir) {
        int start = Math.floorMod(dataDir.toString().hashCode(), SETS);
        for (boolean avoidEarlier : new boolean[] {true, false}) {
            for (int i = 0; i < SETS; i++) {
                int set = (start + i) % SETS;
                if (avoidEarlier && ASSIGNED.values().stream().anyMatch(other -> sharesAName(set, other))) continue;
                var reserved = reserve(set, dataDir);
                if (reserved == null) continue;
                if (noneClaimed(flags(set))) {
                    RESERVED.put(dataDir.toAbsolutePath(), reserved);
                    return set;
                }
                reserved.forEach(HostClaim::close);
            }
        }
        throw new IllegalStateException("every test network set is claimed on this host");
    }

    /**
     * The set's names (its letters, which name its table and interfaces, and its range; its log
     * group is the set's own) reserved for {@code dataDir}, or null if a test JVM holds one, this
     * one included (for another directory that still exists).
     */
    private static List<HostClaim> reserve(int set, Path dataDir) {
        var claims = new ArrayList<HostClaim>();
        for (String name : List.of("letters-" + set % LETTER_PAIRS, "range-" + set / LETTER_PAIRS)) {
            switch (HostClaim.take(HostClaim.HOST_DIR, RESERVATION, name, "a test JVM (pid " + ProcessHandle.current().pid() + ") for " + dataDir)) {
                case HostClaim.Result.Claimed claimed -> claims.add(claimed.claim());
                case HostClaim.Result.Taken taken -> {
                    claims.forEach(HostClaim::close);
                    return null;
                }
            }
        }
        return claims;
    }

    /** Ends the reservations of data directories deleted since: their services and sandboxes are gone. */
    private static void releaseGone() {
        RESERVED.entrySet().removeIf(entry -> {
            if (Files.exists(entry.getKey())) return false;
            entry.getValue().forEach(HostClaim::close);
            return true;
        });
    }

    private static boolean sharesAName(int set, int other) {
        return set % LETTER_PAIRS == other % LETTER_PAIRS || set / LETTER_PAIRS == other / LETTER_PAIRS;
    }

    private static boolean noneClaimed(List<String> flags) {
        for (int i = 0; i + 1 < flags.size(); i += 2) {
            if (flags.get(i).equals("--network-allow-private")) continue;
            if (!HostClaim.isFree(HostClaim.HOST_DIR, flags.get(i).substring(2), flags.get(i + 1))) return false;
        }
        return true;
    }

    private static List<String> flags(int set) {
        int pair = set % LETTER_PAIRS;
        String letters = "" + (char) ('a' + pair % 26) + (char) ('a' + pair / 26);
        return List.of("--network-table", "stasis_t" + letters, "--network-interface-prefix", "t" + letters,
                "--network-range", "10." + (128 + set / LETTER_PAIRS) + ".0.0/16", "--network-allow-private", "10.254.0.0/16",
                "--network-log-group", Integer.toString(20_000 + set));
    }
}
