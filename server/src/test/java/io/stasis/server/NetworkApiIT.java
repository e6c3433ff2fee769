package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.testkit.Await;
import io.stasis.testkit.TestNetnsHost;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * Sandbox networks against a real upstream host in a network namespace of the test's own, with
 * test names served by Stasis's resolver: egress policies by network and by name, the blocks no
 * policy lifts, replacing a policy while connections run, and the network across hibernation.
 */
@Tag("root")
class NetworkApiIT {
    private static TestNetnsHost upstream;
    /** A second host that serves nothing: where a sandbox might try to send an allowed name. */
    private static TestNetnsHost elsewhere;
    private static ServiceFixture service;
    private static RawApi api;
    private static Path served;

    @BeforeAll
    static void start() throws Exception {
        upstream = TestNetnsHost.createAny();
        elsewhere = TestNetnsHost.createAny();
        served = Files.createTempDirectory("stasis-upstream");
        Files.writeString(served.resolve("index.html"), "hello from upstream\n");
        // A response that takes two seconds to finish: a connection that is established before a policy change.
        Files.writeString(served.resolve("slow.py"), """
                import http.server, time
                class Slow(http.server.BaseHTTPRequestHandler):
                    def do_GET(self):
                        self.send_response(200); self.send_header('Content-Length', '20'); self.end_headers()
                        for i in range(20):
                            self.wfile.write(b'x'); self.wfile.flush(); time.sleep(0.1)
                http.server.HTTPServer(('%s', 9090), Slow).serve_forever()
                """.formatted(upstream.address()));
        upstream.serve(served, "python3", "-m", "http.server", "80", "--bind", upstream.address());
        upstream.serve(served, "python3", "-m", "http.server", "8080", "--bind", upstream.address());
        upstream.serve(served, "python3", served.resolve("slow.py").toString());
        // Records every UDP datagram that reaches it: DNS to another resolver, and a UDP tunnel, must never arrive.
        Files.writeString(served.resolve("udp.py"), """
                import socket, threading
                def listen(port):
                    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('%1$s', port))
                    while True:
                        data, peer = s.recvfrom(2048)
                        with open('udp-received', 'a') as f: f.write('%%d %%s\\n' %% (port, peer))
                for p in (53, 5353): threading.Thread(target=listen, args=(p,)).start()
                """.formatted(upstream.address()));
        upstream.serve(served, "python3", served.resolve("udp.py").toString());
        // A TLS origin for allowed.test: whatever it is asked, it completes a handshake and says hello.
        run(served, "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out", "cert.pem",
                "-subj", "/CN=allowed.test", "-days", "1");
        Files.writeString(served.resolve("tls.py"), """
                import socket, ssl
                ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain('cert.pem', 'key.pem')
                s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('%s', 443)); s.listen(16)
                while True:
                    c, _ = s.accept()
                    try:
                        t = ctx.wrap_socket(c, server_side=True); t.sendall(b'hello over tls\\n'); t.close()
                    except Exception:
                        c.close()
                """.formatted(upstream.address()));
        upstream.serve(served, "python3", served.resolve("tls.py").toString());
        upstream.awaitListening(443);
        upstream.awaitListening(80);
        upstream.awaitListening(8080);
        upstream.awaitListening(9090);
        String a = upstream.address();
        service = ServiceFixture.start("--dns-names", "allowed.test=" + a + ";api.allowed.test=" + a + ";denied.test=" + a);
        api = new RawApi(service.url, service.rootKey);
    }

    @AfterEach
    void deleteSandboxes() {
        service.deleteSandboxes();
    }

    @AfterAll
    static void stop() throws Exception {
        try {
            if (api != null) api.close();
            if (service != null) service.close();
        } finally {
            upstream.close();
            elsewhere.close();
            ServiceFixture.deleteTree(served);
        }
    }

    private static void run(Path dir, String... argv) throws Exception {
        var process = new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (process.waitFor() != 0) throw new IllegalStateException(String.join(" ", argv) + ": " + output);
    }

    /** The first TLS record a real client (the JDK's) sends to {@code name}: a ClientHello with that SNI. */
    private static byte[] clientHello(String name) throws Exception {
        var engine = SSLContext.getDefault().createSSLEngine(name, 443);
        engine.setUseClientMode(true);
        var out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        var bytes = new byte[out.remaining()];
        out.get(bytes);
        return bytes;
    }

    private static String create(String runtime, String network) {
        ServiceFixture.assumeRuntime(runtime);
        return api.post("/v1/sandboxes", "{\"template\":\"tiny\",\"runtime\":\"" + runtime + "\"" + (network == null ? "" : ",\"network\":" + network) + "}")
                .get("id").asText();
    }

    /** A plain HTTP/1.0 GET with busybox nc, which sends any Host header asked for. */
    private static String get(String sandbox, String address, int port, String host) {
        return api.sh(sandbox, "printf 'GET / HTTP/1.0\\r\\nHost: " + host + "\\r\\n\\r\\n' | nc -w 3 " + address + " " + port + " 2>&1; true");
    }

    private static boolean fetches(String sandbox, String address, int port) {
        return get(sandbox, address, port, address).contains("200 OK");
    }

    /** Starts a background process (an exec's processes end with it). */
    private static void background(String sandbox, String script) {
        var body = new ObjectMapper().createObjectNode();
        body.putArray("cmd").add("sh").add("-c").add(script);
        assertThat(api.call("POST", "/v1/sandboxes/" + sandbox + "/processes", body.toString()).status()).isEqualTo(201);
    }

    /** The addresses Stasis's resolver gives the sandbox for {@code name} (busybox nslookup prints them after "Name:"). */
    private static String resolve(String sandbox, String name) {
        String out = api.sh(sandbox, "nslookup " + name + " 2>&1; true");
        int at = out.indexOf("Name:");
        return at < 0 ? "" : out.substring(at);
    }

    @EachRuntime
    void aNewSandboxReachesNothingByDefault(String runtime) {
        var id = create(runtime, null);
        var network = api.get("/v1/sandboxes/" + id + "/network");
        assertThat(network.get("enabled").asBoolean()).isTrue();
        assertThat(network.get("address").asText()).startsWith("10.");
        assertThat(network.get("dns").asText()).isEqualTo(network.get("gateway").asText());
        assertThat(network.at("/egress/default").asText()).isEqualTo("deny");
        assertThat(api.sh(id, "cat /etc/resolv.conf")).contains("nameserver " + network.get("gateway").asText());
        // No IPv6: runc's kernel has it disabled in the namespace; gVisor's network stack takes no IPv6 address from it.
        String ipv6Off = runtime.equals("gvisor") ? "ip addr | grep -c inet6; true" : "cat /proc/sys/net/ipv6/conf/all/disable_ipv6";
        assertThat(api.sh(id, "ip -4 addr show eth0 2>&1; " + ipv6Off)).contains(network.get("address").asText())
                .endsWith(runtime.equals("gvisor") ? "\n0\n" : "\n1\n");

        assertThat(fetches(id, upstream.address(), 8080)).isFalse();
        assertThat(fetches(id, upstream.address(), 80)).isFalse();
        assertThat(resolve(id, "allowed.test")).doesNotContain(upstream.address());
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @EachRuntime
    void aNetworkAllowedByCidrIsReachedDirectly(String runtime) {
        var id = create(runtime, "{\"egress\":{\"default\":\"deny\",\"allow\":[\"" + upstream.address() + "/32\"]}}");
        assertThat(fetches(id, upstream.address(), 8080)).isTrue();
        assertThat(fetches(id, upstream.address(), 80)).isTrue();
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @EachRuntime
    void aNetworkDeniedByCidrIsRefusedDirectlyAndThroughTheProxy(String runtime) {
        var id = create(runtime, "{\"egress\":{\"default\":\"allow\",\"deny\":[\"" + upstream.address() + "/32\"]}}");
        assertThat(fetches(id, upstream.address(), 8080)).isFalse();
        assertThat(get(id, upstream.address(), 80, "allowed.test")).doesNotContain("200 OK");
        // The dropped packet itself becomes an event (the filter logs it), with the rule that dropped it.
        Await.until("a denied event for the dropped connection", Duration.ofSeconds(10), () -> {
            String events = api.get("/v1/sandboxes/" + id + "/events").toString();
            return events.contains("\"address\":\"" + upstream.address() + "\"") && events.contains("deny " + upstream.address() + "/32");
        });
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @EachRuntime
    void namesAreAllowedByDomainAndWildcardAndCheckedOnTheHostHeader(String runtime) {
        var id = create(runtime, "{\"egress\":{\"default\":\"deny\",\"allow\":[\"allowed.test\",\"*.allowed.test\"]}}");
        // A raw address is not a name the policy allows.
        assertThat(fetches(id, upstream.address(), 8080)).isFalse();
        assertThat(resolve(id, "denied.test")).doesNotContain(upstream.address());

        assertThat(resolve(id, "allowed.test")).contains(upstream.address());
        // Port 80 goes through the proxy, which reads the Host header.
        assertThat(get(id, upstream.address(), 80, "allowed.test")).contains("200 OK");
        assertThat(get(id, upstream.address(), 80, "denied.test")).contains("403").doesNotContain("200 OK");
        assertThat(get(id, upstream.address(), 80, "upstream.example")).contains("403");
        // Resolved through Stasis's DNS: the name's address is open on other TCP ports too.
        assertThat(resolve(id, "api.allowed.test")).contains(upstream.address());
        assertThat(fetches(id, upstream.address(), 8080)).isTrue();
        // The bare domain of a wildcard is not below it, but it is allowed by its own entry; an unrelated name is not.
        assertThat(resolve(id, "other.test")).doesNotContain(upstream.address());

        Await.until("denied events", Duration.ofSeconds(10), () -> {
            JsonNode events = api.get("/v1/sandboxes/" + id + "/events");
            return events.toString().contains("network.denied") && events.toString().contains("denied.test");
        });
        assertThat(api.get("/v1/sandboxes/" + id + "/network").get("deniedConnections").asLong()).isPositive();
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @EachRuntime
    void tinysWgetFetchesAnAllowedNameAndReportsFailuresWithATimeoutGiven(String runtime) {
        var id = create(runtime, "{\"egress\":{\"default\":\"deny\",\"allow\":[\"allowed.test\"]}}");
        // -T is what crashed bookworm's busybox 1.35 (SIGSEGV, exit 139) on every URL.
        assertThat(api.sh(id, "wget -T 5 -q -O - http://allowed.test:8080/index.html")).isEqualTo("hello from upstream\n");
        assertThat(api.sh(id, "wget -T 5 -q -O - http://allowed.test/index.html")).isEqualTo("hello from upstream\n");
        assertThat(api.sh(id, "wget -T 2 -q -O - http://denied.test:8080/ 2>&1; echo exit=$?"))
                .contains("bad address 'denied.test:8080'").endsWith("exit=1\n");
        assertThat(api.sh(id, "wget -T 2 -q -O - http://127.0.0.1:9/ 2>&1; echo exit=$?"))
                .contains("Connection refused").endsWith("exit=1\n");
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @EachRuntime
    void tlsIsCheckedOnItsServerNameAndTheAddressItIsSentTo(String runtime) throws Exception {
        var id = create(runtime, "{\"egress\":{\"default\":\"deny\",\"allow\":[\"allowed.test\"]}}");
        var files = service.client.sandboxes().get(id).files();
        files.write("/tmp/allowed.hello", clientHello("allowed.test"));
        files.write("/tmp/denied.hello", clientHello("denied.test"));
        // The first bytes back: a TLS handshake record (16 03 ...) when the proxy let the hello through.
        String allowed = api.sh(id, "nc -w 3 " + upstream.address() + " 443 < /tmp/allowed.hello | head -c 2 | od -An -tx1; true");
        String denied = api.sh(id, "nc -w 3 " + upstream.address() + " 443 < /tmp/denied.hello | head -c 2 | od -An -tx1; true");
        assertThat(allowed.strip()).isEqualTo("16 03");
        assertThat(denied.strip()).isEmpty();
        // An allowed name sent to another address (a host with no TLS server) reaches the name's real address instead.
        String fronted = api.sh(id, "nc -w 3 " + elsewhere.address() + " 443 < /tmp/allowed.hello | head -c 2 | od -An -tx1; true");
        assertThat(fronted.strip()).isEqualTo("16 03");
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @EachRuntime
    void dnsToAnotherResolverUdpAndIcmpNeverLeaveForANameOnlyPolicy(String runtime) throws Exception {
        var id = create(runtime, "{\"egress\":{\"default\":\"deny\",\"allow\":[\"allowed.test\"]}}");
        assertThat(resolve(id, "allowed.test")).contains(upstream.address());
        assertThat(fetches(id, upstream.address(), 8080)).isTrue();
        api.sh(id, "nslookup allowed.test " + upstream.address() + " >/dev/null 2>&1; echo tunnel | nc -u -w 1 " + upstream.address() + " 5353; true");
        assertThat(api.sh(id, "ping -c 1 -W 1 " + upstream.address() + " >/dev/null 2>&1 && echo PONG || echo LOST")).contains("LOST");
        Thread.sleep(500);
        assertThat(served.resolve("udp-received")).doesNotExist();
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @EachRuntime
    void metadataTheHostAndOtherSandboxesStayBlockedWhenEverythingElseIsAllowed(String runtime) {
        var other = create(runtime, null);
        var id = create(runtime, "{\"egress\":{\"default\":\"allow\"}}");
        assertThat(fetches(id, upstream.address(), 8080)).isTrue();
        assertThat(fetches(id, "169.254.169.254", 80)).isFalse();
        var gateway = api.get("/v1/sandboxes/" + id + "/network").get("gateway").asText();
        int apiPort = URI.create(service.url).getPort();
        assertThat(fetches(id, gateway, apiPort)).isFalse();
        assertThat(fetches(id, upstream.hostAddress(), apiPort)).isFalse();
        var otherAddress = api.get("/v1/sandboxes/" + other + "/network").get("address").asText();
        api.sh(other, "mkdir -p /www && echo hi > /www/index.html");
        background(other, "httpd -f -p 8000 -h /www");
        Await.until("httpd listening", Duration.ofSeconds(10), () -> fetches(other, "127.0.0.1", 8000));
        assertThat(fetches(id, otherAddress, 8000)).isFalse();
        api.call("DELETE", "/v1/sandboxes/" + id, null);
        api.call("DELETE", "/v1/sandboxes/" + other, null);
    }

    @EachRuntime
    void aReplacedPolicyAppliesToNewConnectionsWhileEstablishedOnesContinue(String runtime) {
        var id = create(runtime, "{\"egress\":{\"default\":\"deny\"}}");
        assertThat(fetches(id, upstream.address(), 9090)).isFalse();
        var allowed = api.call("PUT", "/v1/sandboxes/" + id + "/network",
                "{\"egress\":{\"default\":\"deny\",\"allow\":[\"" + upstream.address() + "/32\"]}}");
        assertThat(allowed.status()).isEqualTo(200);
        assertThat(allowed.body().at("/egress/allow/0").asText()).isEqualTo(upstream.address() + "/32");

        background(id, "printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc " + upstream.address() + " 9090 > /tmp/slow");
        Await.until("the slow download started", Duration.ofSeconds(10), () -> api.sh(id, "cat /tmp/slow 2>/dev/null; true").contains("x"));
        assertThat(api.call("PUT", "/v1/sandboxes/" + id + "/network", "{\"egress\":{\"default\":\"deny\"}}").status()).isEqualTo(200);
        assertThat(fetches(id, upstream.address(), 8080)).isFalse();
        Await.until("the established download finished", Duration.ofSeconds(15), () -> api.sh(id, "cat /tmp/slow").contains("x".repeat(20)));

        assertThat(api.call("PUT", "/v1/sandboxes/" + id + "/network", "{\"egress\":{\"default\":\"maybe\"}}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("PUT", "/v1/sandboxes/" + id + "/network", "{\"egress\":{\"allow\":[\"not a domain!\"]}}").errorCode()).isEqualTo("invalid_request");
        assertThat(api.call("PUT", "/v1/sandboxes/" + id + "/network", "{\"egress\":{\"allow\":[\"10.0.0.0/33\"]}}").errorCode()).isEqualTo("invalid_request");
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @EachRuntime
    void theNetworkComesBackAfterHibernationWithTheSameAddress(String runtime) {
        var id = create(runtime, "{\"egress\":{\"default\":\"deny\",\"allow\":[\"" + upstream.address() + "/32\"]}}");
        var before = api.get("/v1/sandboxes/" + id + "/network").get("address").asText();
        assertThat(api.call("POST", "/v1/sandboxes/" + id + "/hibernate", null).status()).isEqualTo(200);
        assertThat(fetches(id, upstream.address(), 8080)).isTrue();
        assertThat(api.get("/v1/sandboxes/" + id + "/network").get("address").asText()).isEqualTo(before);
        var fork = api.post("/v1/sandboxes/" + id + "/fork", "{}").get("items").get(0).get("id").asText();
        assertThat(api.get("/v1/sandboxes/" + fork + "/network").get("address").asText()).isNotEqualTo(before);
        assertThat(fetches(fork, upstream.address(), 8080)).isTrue();
        api.call("DELETE", "/v1/sandboxes/" + fork, null);
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }
}
