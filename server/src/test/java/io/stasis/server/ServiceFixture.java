package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.runtime.runc.RunscConfig;
import io.stasis.sdk.StasisClient;
import io.stasis.testkit.HostLeaks;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A real service in this JVM on a fresh data directory: its own btrfs image, catalog and runtime
 * state, the busybox template as default. Closing it deletes every sandbox, stops the service and
 * checks that nothing is left on the host.
 */
final class ServiceFixture implements AutoCloseable {
    final Path dataDir;
    final Daemon daemon;
    final String url;
    final String rootKey;
    final StasisClient client;

    private ServiceFixture(Path dataDir, Daemon daemon) throws IOException {
        this.dataDir = dataDir;
        this.daemon = daemon;
        this.url = "http://127.0.0.1:" + daemon.port();
        this.rootKey = Files.readString(daemon.rootKeyFile()).strip();
        this.client = StasisClient.connect(url, rootKey);
    }

    /** Skips the calling test where {@code runtime} is gvisor and ./stasis setup has not installed and verified runsc. */
    static void assumeRuntime(String runtime) {
        if (runtime.equals("gvisor")) assumeTrue(RunscConfig.installedAndVerified(), "./stasis setup installed and verified runsc");
    }

    /**
     * A create request's JSON object {@code body} asking for {@code runtime} too, the test skipped
     * where that runtime is not set up.
     */
    static String inRuntime(String runtime, String body) {
        assumeRuntime(runtime);
        return body.substring(0, body.lastIndexOf('}')) + ", \"runtime\": \"" + runtime + "\"}";
    }

    static ServiceFixture start(String... extraFlags) throws IOException {
        Path dataDir = Files.createTempDirectory("stasis-server-it");
        try {
            return startIn(dataDir, extraFlags);
        } catch (IOException | RuntimeException e) {
            deleteTree(dataDir); // a start refused (a flag, say) leaves no directory behind
            throw e;
        }
    }

    /** The same on a data directory the caller prepared (it may already hold a previous run's state). */
    static ServiceFixture startIn(Path dataDir, String... extraFlags) throws IOException {
        // A warm pool that stays at 2: a pool grown by a test's quick creates would start sandboxes no test asked for,
        // on the two cores that two test JVMs share (WarmPoolTest covers growth, the bench measures it).
        var flags = new ArrayList<>(List.of("--port", "0", "--preview-port", "0", "--data-dir", dataDir.toString(), "--pool-size", "8G",
                "--standby-swap", "2G", "--warm-pool-max", "2",
                "--default-template", "tiny", "--no-slow-templates"));
        flags.addAll(TestNetworkFlags.forDataDir(dataDir));
        flags.addAll(TestNetworkFlags.BUCKET_ENDPOINTS);
        flags.addAll(List.of(extraFlags));
        return new ServiceFixture(dataDir, Daemon.start(ServerConfig.parse(flags.toArray(String[]::new))));
    }

    /**
     * Deletes every sandbox, for a class's {@code @AfterEach}: sandboxes a test leaves running (its
     * counters, its forks) would take the CPU of every later test of the class.
     */
    void deleteSandboxes() {
        daemon.deleteAllSandboxes();
    }

    /** Stops the service as a restart would: its sandboxes keep running, its data directory stays. */
    void stopKeepingSandboxes() {
        client.close();
        daemon.close();
    }

    @Override
    public void close() {
        var misplaced = HostLeaks.sandboxProcessesInToolCgroups(); // while the sandboxes still run
        try {
            daemon.deleteAllSandboxes();
        } finally {
            client.close();
            daemon.close();
        }
        assertThat(misplaced).as("sandbox processes left at the host tools' CPU weight").isEmpty();
        assertThat(HostLeaks.mountsUnder(dataDir)).as("mounts left (bucket mounts' FUSE ones included)").isEmpty();
        assertThat(HostLeaks.processesWorkingUnder(dataDir)).as("bucket mount daemons left").isEmpty();
        assertThat(HostLeaks.swapFilesUnder(dataDir)).as("standby swap file left on").isEmpty();
        try {
            assertThat(HostLeaks.loopDevicesBackedBy(dataDir, Duration.ofSeconds(15))).as("loop devices left").isEmpty();
            var network = TestNetworkFlags.forDataDir(dataDir);
            String table = network.get(network.indexOf("--network-table") + 1);
            String prefix = network.get(network.indexOf("--network-interface-prefix") + 1);
            assertThat(HostLeaks.nftTables(table)).as("nftables table left").isEmpty();
            assertThat(HostLeaks.interfaces(prefix, Duration.ofSeconds(15))).as("sandbox links left").isEmpty();
        } finally {
            // Nothing is mounted below it (checked above): its files go whatever else failed.
            deleteTree(dataDir);
        }
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
