package io.stasis.network.linux.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.core.network.EgressAttempt;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.ToolRunner;
import io.stasis.network.linux.RecordingGate;
import io.stasis.testkit.Await;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy between two network namespaces, through real nftables REDIRECT rules, with curl in the
 * "sandbox" and a Python HTTP and HTTPS server in the "internet", which answers with the address it
 * was reached on, so a test can tell the real origin from the attacker's server.
 */
@Tag("root")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EgressProxyIT {
    private static final Logger log = LoggerFactory.getLogger(EgressProxyIT.class);
    private static final String ALLOWED = "allowed.test";
    private static final String SERVER = """
            import http.server, socketserver, ssl, sys, threading
            class Handler(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def do_GET(self):
                    body = ("served-by %s host=%s\\n" % (self.connection.getsockname()[0], self.headers.get("Host"))).encode()
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def log_message(self, *args):
                    pass
            class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
                daemon_threads = True
                allow_reuse_address = True
            plain = Server(("0.0.0.0", 80), Handler)
            direct = Server(("0.0.0.0", 8080), Handler)
            tls = Server(("0.0.0.0", 443), Handler)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[1], sys.argv[2])
            tls.socket = context.wrap_socket(tls.socket, server_side=True)
            for server in (plain, direct, tls):
                threading.Thread(target=server.serve_forever, daemon=True).start()
            print("ready", flush=True)
            threading.Event().wait()
            """;

    /** Small enough to reach in a test, large enough for the sequential requests of the others. */
    private static final EgressLimits LIMITS = new EgressLimits(8, Duration.ofSeconds(3));

    private final TestNetwork net = new TestNetwork();
    private final SandboxId sandbox = SandboxId.random();
    private RecordingGate gate;
    private EgressProxy proxy;

    @BeforeAll
    void setUp() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root for network namespaces and nftables");
        for (String tool : List.of("ip", "nft", "curl", "python3", "openssl"))
            assumeTrue(Files.isExecutable(ToolRunner.locate(tool)), tool + " is not installed");
        gate = new RecordingGate(Map.of(net.clientAddress(), sandbox),
                new EgressPolicy(EgressPolicy.Action.DENY, List.of(EgressRule.parse(ALLOWED, "test")), List.of()));
        NameResolver resolver = name -> name.equals(ALLOWED) ? List.of(net.origin()) : List.of();
        proxy = EgressProxy.start(gate, resolver, InetAddress.getByName("0.0.0.0"), 0, 0, LIMITS);
        net.onClose(proxy::close);
        net.create(proxy.httpPort(), proxy.tlsPort());
        startServer();
    }

    @AfterAll
    void tearDown() throws Exception {
        net.close();
    }

    @Test
    void anAllowedHostPassesAndTheAnswerComesBack() throws Exception {
        assertThat(curl("-H", "Host: " + ALLOWED, "http://" + ip(net.origin()) + "/"))
                .isEqualTo("served-by " + ip(net.origin()) + " host=" + ALLOWED);
        assertThat(gate.allowed()).extracting(EgressAttempt::domain, EgressAttempt::address, EgressAttempt::port, EgressAttempt::protocol)
                .contains(org.assertj.core.groups.Tuple.tuple(Optional.of(ALLOWED), Optional.of(ip(net.origin())), 80, "http"));
    }

    @Test
    void aDeniedHostGetsA403NamingTheRule() throws Exception {
        var r = net.inClient("curl", "-sS", "-m", "10", "-w", "\n%{http_code}", "-H", "Host: denied.test", "http://" + ip(net.origin()) + "/");
        assertThat(r.stdoutText()).contains("'denied.test'", "default deny").endsWith("403");
        assertThat(gate.denied()).contains(new EgressAttempt(Optional.of("denied.test"), Optional.of(ip(net.origin())), 80, "http", "default deny"));
    }

    @Test
    void anAllowedSniCompletesTheHandshakeWithTheOrigin() throws Exception {
        assertThat(curl("-k", "--resolve", ALLOWED + ":443:" + ip(net.origin()), "https://" + ALLOWED + "/"))
                .isEqualTo("served-by " + ip(net.origin()) + " host=" + ALLOWED);
    }

    @Test
    void aForbiddenSniToAnAllowedAddressIsCut() throws Exception {
        var r = net.inClient("curl", "-sS", "-k", "-m", "10", "--resolve", "denied.test:443:" + ip(net.origin()), "https://denied.test/");
        assertThat(r.exitCode()).as(r.stderrText()).isNotZero();
        assertThat(r.stdoutText()).doesNotContain("served-by");
        assertThat(gate.denied()).contains(new EgressAttempt(Optional.of("denied.test"), Optional.of(ip(net.origin())), 443, "tls", "default deny"));
    }

    @Test
    void anAllowedSniSentToAnotherAddressReachesTheRealOriginInstead() throws Exception {
        assertThat(curl("-k", "--resolve", ALLOWED + ":443:" + ip(net.attacker()), "https://" + ALLOWED + "/"))
                .isEqualTo("served-by " + ip(net.origin()) + " host=" + ALLOWED);
        assertThat(curl("-H", "Host: " + ALLOWED, "http://" + ip(net.attacker()) + "/"))
                .isEqualTo("served-by " + ip(net.origin()) + " host=" + ALLOWED);
    }

    @Test
    void withoutANameTheAddressDecides() throws Exception {
        var r = net.inClient("curl", "-sS", "-k", "-m", "10", "https://" + ip(net.attacker()) + "/");
        assertThat(r.exitCode()).isNotZero();
        assertThat(gate.denied()).contains(new EgressAttempt(Optional.empty(), Optional.of(ip(net.attacker())), 443, "tls", "default deny"));
    }

    @Test
    void dialingTheProxyPortDirectlyIsRefused() throws Exception {
        var r = net.inClient("curl", "-sS", "-m", "10", "-w", "\n%{http_code}", "-H", "Host: " + ALLOWED,
                "http://" + ip(net.clientGateway()) + ":" + proxy.httpPort() + "/");
        assertThat(r.stdoutText()).contains(ConnectionHandler.DIRECT).endsWith("403");
    }

    @Test
    void countsWhatItCarries() throws Exception {
        ProxyStats before = proxy.stats();
        curl("-H", "Host: " + ALLOWED, "http://" + ip(net.origin()) + "/");
        ProxyStats after = proxy.stats();
        assertThat(after.accepted()).isGreaterThan(before.accepted());
        assertThat(after.allowed()).isGreaterThan(before.allowed());
        assertThat(after.bytesUp()).isGreaterThan(before.bytesUp());
        assertThat(after.bytesDown()).isGreaterThan(before.bytesDown());
    }

    /**
     * Not a pass/fail check: sequential requests, each on a new connection, through the proxy (port 80)
     * and routed past it (port 8080, forwarded by the host: enabled on the two test veths only, which
     * go away with the test), for the record.
     */
    @Test
    void measuresRequestsThroughTheProxyAgainstRoutedOnes() throws Exception {
        for (String veth : List.of(net.clientVeth, net.upstreamVeth))
            Files.writeString(Path.of("/proc/sys/net/ipv4/conf", veth, "forwarding"), "1");
        var r = net.inClient("python3", "-c", """
                import http.client, sys, time
                def run(port, n=1000):
                    start = time.perf_counter()
                    for _ in range(n):
                        c = http.client.HTTPConnection(sys.argv[1], port, timeout=10)
                        c.request("GET", "/", headers={"Host": "allowed.test"})
                        c.getresponse().read()
                        c.close()
                    return (time.perf_counter() - start) / n * 1000
                run(80, 200); run(8080, 200)
                print("%.3f %.3f" % (run(80), run(8080)))
                """, ip(net.origin()));
        assertThat(r.exitCode()).as(r.stderrText()).isZero();
        String[] ms = r.stdoutText().strip().split(" ");
        log.atInfo().addKeyValue("proxiedMs", ms[0]).addKeyValue("routedMs", ms[1])
                .log("sequential new-connection HTTP requests, through the egress proxy and routed past it");
    }

    @Test
    void aSandboxPastItsConnectionLimitIsRefusedNamingTheRule() throws Exception {
        var r = net.inClient("python3", "-c", """
                import socket, subprocess, sys, time
                held = [socket.create_connection((sys.argv[1], 80)) for _ in range(8)]
                time.sleep(0.5)
                over = subprocess.run(["curl", "-sS", "-m", "10", "-w", "\\n%{http_code}", "-H", "Host: allowed.test",
                                       "http://%s/" % sys.argv[1]], capture_output=True, text=True)
                for s in held: s.close()
                time.sleep(0.5)
                again = subprocess.run(["curl", "-sS", "-m", "10", "-H", "Host: allowed.test", "http://%s/" % sys.argv[1]],
                                       capture_output=True, text=True)
                print(over.stdout.replace("\\n", " | ") + " || " + again.stdout.strip())
                """, ip(net.origin()));
        assertThat(r.exitCode()).as(r.stderrText()).isZero();
        assertThat(r.stdoutText()).contains("connection limit 8").contains("| 403").contains("|| served-by");
        assertThat(gate.denied()).anyMatch(a -> a.rule().equals("connection limit 8") && a.port() == 80);
    }

    /** Held connections take no platform thread of their own: both directions of each are virtual threads, parked while idle. */
    @Test
    void heldConnectionsRunOnVirtualThreads() throws Exception {
        var client = Thread.ofVirtual().start(() -> {
            try {
                net.inClient("python3", "-c", """
                        import socket, sys, time
                        held = [socket.create_connection((sys.argv[1], 80)) for _ in range(8)]
                        time.sleep(3)
                        """, ip(net.origin()));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            Await.until("8 connections held by the proxy", Duration.ofSeconds(10), () -> proxy.stats().active() >= 8);
            assertThat(Thread.getAllStackTraces().keySet()).as("platform threads (virtual ones are not listed)")
                    .noneMatch(t -> t.getName().startsWith("egress-http-") && !t.getName().endsWith("-accept"));
        } finally {
            client.join();
        }
        Await.until("the connections closed", Duration.ofSeconds(10), () -> proxy.stats().active() == 0);
    }

    @Test
    void aConnectionIdlePastTheLimitIsClosed() throws Exception {
        long before = proxy.stats().idleClosed();
        var r = net.inClient("python3", "-c", """
                import socket, sys, time
                s = socket.create_connection((sys.argv[1], 80))
                s.sendall(b"GET / HTTP/1.1\\r\\nHost: allowed.test\\r\\n\\r\\n")
                s.settimeout(15)
                got, last = 0, time.monotonic()
                while True:  # the answer, in as many pieces as it comes, then nothing: the proxy closes it once idle
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    got, last = got + len(chunk), time.monotonic()
                print("%d %.1f" % (got, time.monotonic() - last))  # a timeout (not closed) would have raised instead
                """, ip(net.origin()));
        assertThat(r.exitCode()).as(r.stderrText()).isZero();
        String[] out = r.stdoutText().strip().split(" ");
        assertThat(Integer.parseInt(out[0])).as("the answer came").isPositive();
        assertThat(Double.parseDouble(out[1])).as("closed after the 3 s idle limit").isBetween(1.5, 10.0);
        assertThat(proxy.stats().idleClosed()).isGreaterThan(before);
    }

    private String curl(String... args) throws Exception {
        var argv = new ArrayList<>(List.of("curl", "-sS", "-m", "10"));
        argv.addAll(List.of(args));
        var r = net.inClient(argv.toArray(String[]::new));
        assertThat(r.exitCode()).as("curl %s: %s", argv, r.stderrText()).isZero();
        return r.stdoutText().strip();
    }

    private void startServer() throws Exception {
        Path dir = Files.createTempDirectory("stasis-t-" + net.label);
        net.onClose(() -> {
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) Files.delete(f);
            }
            Files.delete(dir);
        });
        Path key = dir.resolve("key.pem");
        Path cert = dir.resolve("cert.pem");
        TestNetwork.run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=" + ALLOWED,
                "-keyout", key.toString(), "-out", cert.toString());
        Process server = new ProcessBuilder("ip", "netns", "exec", net.upstreamNs, "python3", "-c", SERVER, cert.toString(), key.toString())
                .redirectErrorStream(true).start();
        long pid = server.pid();
        net.onClose(() -> {
            server.destroy();
            if (!server.waitFor(5, TimeUnit.SECONDS)) server.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).as("server pid %d", pid).isNotEqualTo(Optional.of(true));
        });
        var reader = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        String first = CompletableFuture.supplyAsync(() -> {
            try {
                return reader.readLine();
            } catch (IOException e) {
                return "error: " + e;
            }
        }).get(15, TimeUnit.SECONDS);
        assertThat(first).as("upstream server's first line").isEqualTo("ready");
        Thread.ofVirtual().start(() -> reader.lines().forEach(line -> log.debug("upstream server: {}", line))); // a full pipe would stall it
    }

    private static String ip(InetAddress a) {
        return a.getHostAddress();
    }
}
