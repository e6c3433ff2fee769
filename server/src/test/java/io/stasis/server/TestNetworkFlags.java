package io.stasis.server;

import java.nio.file.Path;
import java.util.List;

/**
 * Network flags of a test service, derived from its data directory, so that services alive at the
 * same time on this host use their own nftables table, interface names and address range, and a
 * restarted service gets the same ones (the NFLOG group too). Test hosts (see TestNetnsHost) live in 10.254.0.0/16,
 * which these services let policies open.
 */
final class TestNetworkFlags {
    private TestNetworkFlags() {
    }

    /** The tests' S3 servers (s3proxy) listen on loopback, which bucket mounts may not reach unless opened. */
    static final List<String> BUCKET_ENDPOINTS = List.of("--bucket-endpoints-allow", "127.0.0.0/8");

    static List<String> forDataDir(Path dataDir) {
        int h = Math.floorMod(dataDir.toAbsolutePath().toString().hashCode(), 26 * 26 * 64);
        String letters = "" + (char) ('a' + h % 26) + (char) ('a' + (h / 26) % 26);
        int second = 128 + (h / (26 * 26)) % 64;
        return List.of("--network-table", "stasis_t" + letters, "--network-interface-prefix", "t" + letters,
                "--network-range", "10." + second + ".0.0/16", "--network-allow-private", "10.254.0.0/16",
                "--network-log-group", Integer.toString(20_000 + h));
    }
}
