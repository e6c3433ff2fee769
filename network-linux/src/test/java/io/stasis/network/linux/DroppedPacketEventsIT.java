package io.stasis.network.linux;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.core.network.Cidr;
import io.stasis.core.network.EgressAttempt;
import io.stasis.core.network.EgressDecisions;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.NetworkAttachment;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.ToolRunner;
import io.stasis.network.linux.nflog.NflogReader;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Packets the filter drops become denied events: a "sandbox" network namespace plugged as
 * runtime-runc plugs a sandbox (the host end named prefix + slot with the gateway, the sandbox's
 * address inside), a "target" namespace behind a second veth for it to try, and the service's
 * networking (table, resolver, proxy, drop log reader) on a table, interface prefix and NFLOG
 * group of this test's own. Every packet tried is dropped on this host; nothing leaves it.
 */
@Tag("root")
class DroppedPacketEventsIT {
    private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration EVENT_TIMEOUT = Duration.ofSeconds(15);
    /** tcp ADDRESS PORT SECONDS: one connect; udp ADDRESS PORT [COUNT]: datagrams to COUNT ports from PORT on; icmp ADDRESS: one echo request. */
    private static final String PROBE = """
            import socket, struct, sys
            kind, address = sys.argv[1], sys.argv[2]
            if kind == "tcp":
                s = socket.socket()
                s.settimeout(float(sys.argv[4]))
                try:
                    s.connect((address, int(sys.argv[3])))
                except OSError as e:
                    print(e)
            elif kind == "udp":
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                first = int(sys.argv[3])
                for port in range(first, first + (int(sys.argv[4]) if len(sys.argv) > 4 else 1)):
                    s.sendto(b"x", (address, port))
            else:
                s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
                body = struct.pack("!BBHHH", 8, 0, 0, 7, 1) + b"stasis"
                total = sum(struct.unpack("!7H", body))
                total = (total >> 16) + (total & 0xffff)
                total += total >> 16
                s.sendto(body[:2] + struct.pack("!H", ~total & 0xffff) + body[4:], (address, 0))
            """;

    /** Routed flows a sandbox may hold at once here: a few, to go past. */
    private static final int ROUTED_FLOWS = 2;
    /** A sandbox's rates here; a transfer each way moves four seconds of the slower (a policer's bucket holds one). */
    private static final long EGRESS_BITS = 8_000_000;
    private static final long INGRESS_BITS = 8_000_000;
    private static final int TRANSFER_BYTES = (int) (4 * EGRESS_BITS / 8);
    private final String label = HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
    private final int net = ThreadLocalRandom.current().nextInt(256);
    private final int targetBase = 8 * ThreadLocalRandom.current().nextInt(32);
    private final NetworkConfig config = new NetworkConfig(Cidr.parse("10.249." + net + ".0/24", "range"), "d" + label, "stasis_d" + label,
            List.of(), Duration.ofSeconds(10), 30000 + ThreadLocalRandom.current().nextInt(20000)).withRoutedConnections(ROUTED_FLOWS)
            .withBandwidth(new NetworkConfig.Bandwidth(EGRESS_BITS, INGRESS_BITS));
    private final String sandboxNs = "stasis-d" + label + "-s";
    private final String targetNs = "stasis-d" + label + "-t";
    private final String targetVeth = "x" + label + "t";
    /** In the target namespace: denied by the policy's deny entry, refused by its default, blocked as private. */
    private final String denied = "198.51.100." + (targetBase + 2);
    private final String unlisted = "198.51.100." + (targetBase + 3);
    private final String privateAddress = "10.248." + net + ".2";
    /** Link-local, as the metadata address 169.254.169.254 is, but not it: the host's own route to that stays untouched. */
    private final String linkLocal = "169.254.250." + (2 + net % 250);

    private final SandboxId sandbox = SandboxId.random();
    private final LinkedBlockingQueue<EgressAttempt> events = new LinkedBlockingQueue<>();
    private final List<EgressAttempt> seen = new ArrayList<>();
    private final Deque<Step> undo = new ArrayDeque<>();
    private LinuxHostNetwork host;
    private NetworkAttachment link;

    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }

    @BeforeEach
    void plug() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root for network namespaces, nftables and NFLOG");
        for (String tool : List.of("ip", "nft", "python3"))
            assumeTrue(Files.isExecutable(ToolRunner.locate(tool)), tool + " is not installed");
        host = new LinuxHostNetwork(config);
        link = host.attachment(1);
        namespace(sandboxNs);
        namespace(targetNs);
        // As VethPlug does: the host end is the sandbox's interface, the other end its eth0.
        veth(link.hostInterface(), "s" + label + "p", sandboxNs, link.gateway().getHostAddress() + "/30",
                List.of(link.address().getHostAddress() + "/30"));
        run("ip", "-n", sandboxNs, "route", "add", "default", "via", link.gateway().getHostAddress());
        veth(targetVeth, targetVeth + "p", targetNs, "198.51.100." + (targetBase + 1) + "/29",
                List.of(denied + "/29", unlisted + "/29", privateAddress + "/32", linkLocal + "/32"));
        for (String a : List.of(privateAddress, linkLocal)) run("ip", "route", "add", a + "/32", "dev", targetVeth); // go with the veth

        var networking = LinuxNetworking.start(host, Map.of(), Map.of(), new EgressDecisions() {
            @Override
            public void allowed(SandboxId id, EgressAttempt attempt) {
            }

            @Override
            public void denied(SandboxId id, EgressAttempt attempt) {
                if (id.equals(sandbox)) events.add(attempt);
            }
        });
        undo.push(() -> networking.close(true));
        host.open(sandbox, link, new EgressPolicy(EgressPolicy.Action.DENY, List.of(), List.of(EgressRule.parse(denied + "/32", "deny"))));
    }

    @AfterEach
    void unplug() throws Exception {
        Exception failure = null;
        while (!undo.isEmpty()) {
            try {
                undo.pop().run();
            } catch (Exception e) {
                if (failure == null) failure = new IOException("cleanup of the dropped-packet test network " + label + " incomplete");
                failure.addSuppressed(e);
            }
        }
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().equals("stasis-nflog-" + config.logGroup()));
        if (failure != null) throw failure;
    }

    @Test
    void dropsOfTcpUdpIcmpAndHostAttemptsBecomeDeniedEvents() throws Exception {
        // Long enough for the SYN to be sent again twice: each retransmission is dropped, only the attempt is logged.
        probe("tcp", denied, "9", "3.5");
        var tcp = await("tcp to " + denied, e -> e.address().equals(Optional.of(denied)) && e.protocol().equals("tcp"));
        assertThat(tcp).isEqualTo(new EgressAttempt(Optional.empty(), Optional.of(denied), 9, "tcp", "deny " + EgressRule.parse(denied + "/32", "deny")));

        probe("udp", unlisted, "5353");
        assertThat(await("udp to " + unlisted, e -> e.protocol().equals("udp")))
                .isEqualTo(new EgressAttempt(Optional.empty(), Optional.of(unlisted), 5353, "udp", "default deny"));

        probe("icmp", privateAddress);
        assertThat(await("ping of " + privateAddress, e -> e.protocol().equals("icmp")))
                .isEqualTo(new EgressAttempt(Optional.empty(), Optional.of(privateAddress), 0, "icmp", "blocked private 10.0.0.0/8"));

        probe("tcp", linkLocal, "8080", "1.5");
        assertThat(await("tcp to " + linkLocal, e -> e.address().equals(Optional.of(linkLocal))))
                .isEqualTo(new EgressAttempt(Optional.empty(), Optional.of(linkLocal), 8080, "tcp", "blocked link-local"));

        String gateway = link.gateway().getHostAddress();
        probe("tcp", gateway, "9", "1.5");
        assertThat(await("tcp to the host", e -> e.address().equals(Optional.of(gateway))))
                .isEqualTo(new EgressAttempt(Optional.empty(), Optional.of(gateway), 9, "tcp", "blocked host"));

        events.drainTo(seen);
        assertThat(seen).as("the retransmitted SYNs were not logged again").filteredOn(e -> e.protocol().equals("tcp") && e.port() == 9
                && e.address().equals(Optional.of(denied))).hasSize(1);
        assertThat(host.deniedCount(sandbox)).as("every SYN was dropped").isGreaterThanOrEqualTo(3);
    }

    @Test
    void aFloodIsDroppedWholeAndLoggedWithinTheRate() throws Exception {
        int flood = 300;
        probe("udp", unlisted, "20000", Integer.toString(flood));
        long deadline = System.nanoTime() + EVENT_TIMEOUT.toNanos();
        while (host.deniedCount(sandbox) < flood && System.nanoTime() < deadline) events.poll(50, TimeUnit.MILLISECONDS);
        assertThat(host.deniedCount(sandbox)).as("the limit only thins the log: every datagram was dropped").isEqualTo(flood);

        // The kernel has logged all it will by now; let the reader deliver it, then count.
        while (events.poll(1, TimeUnit.SECONDS) instanceof EgressAttempt e) seen.add(e);
        events.drainTo(seen);
        assertThat(seen).as("burst 40, then 20 a second").hasSizeBetween(20, 60).allMatch(e -> e.rule().equals("default deny"));
    }

    /**
     * Flows the policy routes (an allowed network, no proxy) past the sandbox's limit: the one over
     * it is dropped, counted and logged as {@code connection limit N}; those within it stay up.
     */
    @Test
    void routedFlowsPastTheLimitAreDroppedAndLogged() throws Exception {
        String target = allowedTarget(4);
        serveInTarget("""
                import socket, sys
                s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((sys.argv[1], 7000)); s.listen(16); print("ready", flush=True)
                held = []
                while True: held.append(s.accept())
                """, target);

        var opened = ToolRunner.run(List.of("ip", "netns", "exec", sandboxNs, "python3", "-c", """
                import socket, sys
                held, out = [], []
                for i in range(int(sys.argv[2])):
                    c = socket.socket(); c.settimeout(2)
                    try:
                        c.connect((sys.argv[1], 7000)); held.append(c); out.append("ok")
                    except OSError:
                        out.append("dropped")
                print(" ".join(out))
                """, target, Integer.toString(ROUTED_FLOWS + 1)), TOOL_TIMEOUT);

        assertThat(opened.stdoutText().strip()).as(opened.stderrTail()).isEqualTo("ok ".repeat(ROUTED_FLOWS) + "dropped");
        assertThat(await("the flow over the limit", e -> e.rule().startsWith("connection limit")))
                .isEqualTo(new EgressAttempt(Optional.empty(), Optional.of(target), 7000, "tcp", "connection limit " + ROUTED_FLOWS));
        assertThat(host.deniedCount(sandbox)).as("its SYNs were dropped").isGreaterThanOrEqualTo(1);
    }

    /**
     * What a sandbox sends and receives is policed at its rates on its link: a transfer of four
     * seconds' worth each way takes about three (the bucket holds one second; TCP backs off from
     * the drops), not the milliseconds of a veth's gigabits.
     */
    @Test
    void aSandboxSendsAndReceivesAtItsRates() throws Exception {
        String target = allowedTarget(5);
        serveInTarget("""
                import socket, sys
                s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((sys.argv[1], 7001)); s.listen(4); print("ready", flush=True)
                while True:
                    c, _ = s.accept()
                    size = int(c.recv(15, socket.MSG_WAITALL).decode().strip())
                    if size > 0:
                        c.sendall(b"x" * size)
                    else:
                        while c.recv(65536): pass
                    c.close()
                """, target);

        // Seconds to receive SIZE bytes, then to send them (the server reads until the close).
        var timed = ToolRunner.run(List.of("ip", "netns", "exec", sandboxNs, "python3", "-c", """
                import socket, sys, time
                address, size = sys.argv[1], int(sys.argv[2])
                c = socket.create_connection((address, 7001)); c.sendall(b"%15d" % size)
                start, got = time.monotonic(), 0
                while got < size:
                    chunk = c.recv(65536)
                    if not chunk: break
                    got += len(chunk)
                received = time.monotonic() - start
                c.close()
                c = socket.create_connection((address, 7001)); c.sendall(b"%15d" % 0)
                start = time.monotonic(); c.sendall(b"y" * size); c.shutdown(socket.SHUT_WR); c.recv(1)
                print(received, time.monotonic() - start)
                """, target, Integer.toString(TRANSFER_BYTES)), Duration.ofSeconds(60));

        String[] seconds = timed.stdoutText().strip().split(" ");
        assertThat(seconds).as(timed.stderrTail()).hasSize(2);
        double received = TRANSFER_BYTES * 8 / Double.parseDouble(seconds[0]);
        double sent = TRANSFER_BYTES * 8 / Double.parseDouble(seconds[1]);
        System.out.printf("policed rates: received %.1f Mbit/s (limit %.1f), sent %.1f Mbit/s (limit %.1f)%n",
                received / 1e6, INGRESS_BITS / 1e6, sent / 1e6, EGRESS_BITS / 1e6);
        assertThat(received).as("received, bits/s").isBetween(0.5 * INGRESS_BITS, 1.6 * INGRESS_BITS);
        assertThat(sent).as("sent, bits/s").isBetween(0.5 * EGRESS_BITS, 1.6 * EGRESS_BITS);
    }

    @Test
    void aSecondReaderOfTheSameGroupIsRefusedByName() {
        assertThatThrownBy(() -> NflogReader.start(config.logGroup(), dropped -> { }))
                .isInstanceOf(IOException.class).hasMessageContaining("NFLOG group " + config.logGroup()).hasMessageContaining("its own group");
    }

    /** A new address of the target namespace, at the end of its /29, that the sandbox's policy allows. */
    private String allowedTarget(int offset) throws Exception {
        String target = "198.51.100." + (targetBase + offset);
        run("ip", "-n", targetNs, "addr", "add", target + "/29", "dev", targetVeth + "p");
        host.update(sandbox, new EgressPolicy(EgressPolicy.Action.DENY, List.of(EgressRule.parse(target + "/32", "allow")), List.of()));
        return target;
    }

    /** Runs a python server in the target namespace until the test ends; returns once it printed "ready". */
    private void serveInTarget(String script, String address) throws Exception {
        var server = new ProcessBuilder("ip", "netns", "exec", targetNs, "python3", "-c", script, address).redirectErrorStream(true).start();
        undo.push(() -> {
            server.destroyForcibly();
            server.waitFor(10, TimeUnit.SECONDS);
        });
        assertThat(new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8)).readLine()).isEqualTo("ready");
    }

    private EgressAttempt await(String what, Predicate<EgressAttempt> wanted) throws InterruptedException {
        long deadline = System.nanoTime() + EVENT_TIMEOUT.toNanos();
        for (var e : seen) if (wanted.test(e)) return e;
        while (System.nanoTime() < deadline) {
            var e = events.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (e == null) break;
            seen.add(e);
            if (wanted.test(e)) return e;
        }
        throw new AssertionError("no denied event for " + what + " within " + EVENT_TIMEOUT + "; events: " + seen);
    }

    private void probe(String... args) throws Exception {
        var argv = new ArrayList<>(List.of("ip", "netns", "exec", sandboxNs, "python3", "-c", PROBE));
        argv.addAll(List.of(args));
        run(argv.toArray(String[]::new));
    }

    private void namespace(String name) throws Exception {
        run("ip", "netns", "add", name);
        undo.push(() -> run("ip", "netns", "delete", name));
    }

    private void veth(String hostEnd, String inner, String ns, String hostAddress, List<String> innerAddresses) throws Exception {
        run("ip", "link", "add", hostEnd, "type", "veth", "peer", "name", inner);
        // Deleting either end deletes both; once the namespace is gone there is nothing left to find.
        undo.push(() -> ToolRunner.run(List.of("ip", "link", "delete", hostEnd), TOOL_TIMEOUT));
        run("ip", "link", "set", inner, "netns", ns);
        run("ip", "addr", "add", hostAddress, "dev", hostEnd);
        run("ip", "link", "set", hostEnd, "up");
        for (String a : innerAddresses) run("ip", "-n", ns, "addr", "add", a, "dev", inner);
        run("ip", "-n", ns, "link", "set", inner, "up");
        run("ip", "-n", ns, "link", "set", "lo", "up");
    }

    private static void run(String... argv) throws Exception {
        var r = ToolRunner.run(List.of(argv), TOOL_TIMEOUT);
        if (r.exitCode() != 0) throw new IOException(String.join(" ", argv) + " exited " + r.exitCode() + ": " + r.stderrTail());
    }
}
