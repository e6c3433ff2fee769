package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.runtime.runc.RunscConfig;
import io.stasis.testkit.SecretSearch;
import io.stasis.testkit.TestNetnsHost;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Secret headers end to end against an HTTPS upstream in a network namespace of the test's own,
 * with a test CA the service is told to trust (--egress-upstream-ca): the sandbox trusts its own
 * interception CA, requests to a name with a rule carry the secret (the sandbox's own value of the
 * header replaced), other names pass through untouched, plain HTTP never gets it, a deleted secret
 * makes the proxy answer 502 naming it; and the value is nowhere in the sandbox (files, process
 * environments, process memory) nor in any API answer.
 *
 * <p>The tiny template has no TLS client, so requests are made by the host's curl inside the
 * sandbox's network namespace ({@code nsenter -n}), verifying against the CA certificate read from
 * the sandbox's root: the same address, filter and proxy path as the sandbox's own processes.
 */
@Tag("root")
class SecretInjectionIT {
    private static final String SECRET = "stasis-it-secret-" + HexFormat.of().formatHex(randomBytes());
    private static TestNetnsHost upstream;
    private static ServiceFixture service;
    private static RawApi api;
    private static Path served;
    private static final List<String> answers = new ArrayList<>();

    private static byte[] randomBytes() {
        byte[] b = new byte[16];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }

    @BeforeAll
    static void start() throws Exception {
        upstream = TestNetnsHost.createAny();
        served = Files.createTempDirectory("stasis-secret-upstream");
        // A test CA and a certificate for both test names, made with the host's openssl.
        run(served, "sh", "-c", """
                set -e
                openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt -days 2 \
                  -subj /CN=stasis-it-upstream-ca -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign
                openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr -subj /CN=api.allowed.test
                printf 'subjectAltName=DNS:api.allowed.test,DNS:plain.allowed.test\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > ext
                openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2 -extfile ext
                """);
        // Echoes what it received into seen.log (the test reads it from the host), answers only with the header names.
        Files.writeString(served.resolve("echo.py"), """
                import http.server, ssl, sys
                addr, port, tls = sys.argv[1], int(sys.argv[2]), sys.argv[3] == 'tls'
                class Echo(http.server.BaseHTTPRequestHandler):
                    protocol_version = 'HTTP/1.1'
                    def handle_one(self):
                        n = int(self.headers.get('Content-Length') or 0)
                        body = self.rfile.read(n) if n else b''
                        with open('seen.log', 'a') as f:
                            f.write('%s %s %s\\n%s%s\\n--\\n' % (port, self.command, self.path, self.headers, body.decode()))
                        out = ('ok %s %s %d\\n' % (self.command, ','.join(self.headers.keys()), len(body))).encode()
                        self.send_response(200); self.send_header('Content-Length', str(len(out))); self.end_headers(); self.wfile.write(out)
                    do_GET = do_POST = handle_one
                    def log_message(self, *a): pass
                server = http.server.HTTPServer((addr, port), Echo)
                if tls:
                    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain('srv.crt', 'srv.key')
                    server.socket = ctx.wrap_socket(server.socket, server_side=True)
                server.serve_forever()
                """);
        upstream.serve(served, "python3", "echo.py", upstream.address(), "443", "tls");
        upstream.serve(served, "python3", "echo.py", upstream.address(), "80", "plain");
        upstream.awaitListening(443);
        upstream.awaitListening(80);
        String a = upstream.address();
        // gVisor too where it is set up: its sandboxes go through the same proxy.
        String runtimes = RunscConfig.installedAndVerified() ? "runc,gvisor" : "runc";
        service = ServiceFixture.start("--dns-names", "api.allowed.test=" + a + ";plain.allowed.test=" + a,
                "--egress-upstream-ca", served.resolve("ca.crt").toString(), "--runtimes-allowed", runtimes);
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
            ServiceFixture.deleteTree(served);
        }
    }

    /** Every API answer of this test goes through here, so that all of them can be searched for the value. */
    private static RawApi.Response call(String method, String path, String body) {
        var response = api.call(method, path, body);
        answers.add(response.body().toString());
        return response;
    }

    private static final String POLICY = """
            {"egress": {"default": "deny", "allow": ["api.allowed.test", "plain.allowed.test"]},
             "rules": [{"domain": "api.allowed.test", "headers": {"Authorization": "Bearer {{secret:API_TOKEN}}", "X-Stasis-Test": "fixed"}}]}""";

    @Test
    void theProxyAddsTheSecretAndTheSandboxNeverHoldsIt() throws Exception {
        // Write-only: the value never comes back.
        var set = call("POST", "/v1/secrets", "{\"name\": \"API_TOKEN\", \"value\": \"" + SECRET + "\"}");
        assertThat(set.status()).isEqualTo(201);
        assertThat(set.body().get("name").asText()).isEqualTo("API_TOKEN");
        assertThat(call("POST", "/v1/secrets", "{\"name\": \"API_TOKEN\", \"value\": \"" + SECRET + "\"}").status()).isEqualTo(200);
        assertThat(call("GET", "/v1/secrets", null).body().toString()).contains("API_TOKEN");
        assertThat(call("POST", "/v1/secrets", "{\"name\": \"1bad\", \"value\": \"x\"}").errorCode()).isEqualTo("invalid_request");

        // Rules are checked: unknown secrets and domains the egress policy does not allow are refused.
        var unknown = call("POST", "/v1/sandboxes", "{\"template\": \"tiny\", \"network\": " + POLICY.replace("API_TOKEN", "NO_SUCH") + "}");
        assertThat(unknown.status()).as(unknown.toString()).isEqualTo(422);
        assertThat(unknown.body().toString()).contains("NO_SUCH");
        var notAllowed = call("POST", "/v1/sandboxes", "{\"template\": \"tiny\", \"network\": " + POLICY.replace("[\"api.allowed.test\", ", "[") + "}");
        assertThat(notAllowed.status()).as(notAllowed.toString()).isEqualTo(422);
        assertThat(notAllowed.body().toString()).contains("not allowed by network.egress");

        var created = call("POST", "/v1/sandboxes", "{\"template\": \"tiny\", \"network\": " + POLICY + "}");
        assertThat(created.status()).isEqualTo(201);
        String id = created.body().get("id").asText();
        var network = call("GET", "/v1/sandboxes/" + id + "/network", null).body();
        assertThat(network.at("/rules/0/headers/Authorization").asText()).isEqualTo("Bearer {{secret:API_TOKEN}}");

        // The sandbox trusts its CA: the anchor and a block in the bundle (created: tiny has none).
        Path root = service.dataDir.resolve("btrfs/roots/" + id);
        String anchor = Files.readString(root.resolve("usr/local/share/ca-certificates/stasis-egress.crt"));
        assertThat(anchor).startsWith("-----BEGIN CERTIFICATE-----");
        assertThat(Files.readString(root.resolve("etc/ssl/certs/ca-certificates.crt"))).contains(anchor.strip());
        Path caFile = served.resolve("sandbox-ca.crt");
        Files.writeString(caFile, anchor);
        int init = initPid(id);

        // Two requests on one kept-alive connection, and a POST with a body: each carries the secret, the sandbox's own value is replaced.
        String out = curl(init, caFile, "-H", "Authorization: Bearer sandbox-own", "https://api.allowed.test/one", "https://api.allowed.test/two");
        assertThat(out).contains("ok GET").doesNotContain(SECRET);
        String post = curl(init, caFile, "--data-binary", "hello body", "https://api.allowed.test/post");
        assertThat(post).contains("ok POST").contains(" 10");
        String seen = Files.readString(served.resolve("seen.log"));
        assertThat(count(seen, "Authorization: Bearer " + SECRET)).isEqualTo(3);
        assertThat(seen).doesNotContain("sandbox-own").contains("X-Stasis-Test: fixed").contains("hello body");

        // Another allowed name is not intercepted: the upstream's own certificate, no secret. Plain HTTP never gets one.
        Files.delete(served.resolve("seen.log"));
        assertThat(curl(init, served.resolve("ca.crt"), "https://plain.allowed.test/")).contains("ok GET");
        assertThat(api.sh(id, "printf 'GET / HTTP/1.0\\r\\nHost: api.allowed.test\\r\\n\\r\\n' | nc -w 3 " + upstream.address() + " 80; true"))
                .contains("ok GET");
        seen = Files.readString(served.resolve("seen.log"));
        assertThat(seen).doesNotContain(SECRET).doesNotContain("X-Stasis-Test");

        // The secret is nowhere in the sandbox: files, environments, memory of every process.
        api.sh(id, "echo warm > /tmp/f; sleep 1");
        assertThat(SecretSearch.filesHolding(root, SECRET)).as("files in the root holding the secret").isEmpty();
        for (int pid : pids(id)) {
            assertThat(SecretSearch.contains(Files.readAllBytes(Path.of("/proc/" + pid + "/environ")), SECRET)).as("environ of " + pid).isFalse();
            assertThat(memoryHolds(pid, SECRET)).as("memory of " + pid).isFalse();
        }

        // A deleted secret: the proxy answers 502 naming it, never a value.
        assertThat(call("DELETE", "/v1/secrets/API_TOKEN", null).status()).isEqualTo(204);
        assertThat(call("DELETE", "/v1/secrets/API_TOKEN", null).errorCode()).isEqualTo("secret_not_found");
        String missing = curlStatus(init, caFile, "https://api.allowed.test/three");
        assertThat(missing).startsWith("502").contains("API_TOKEN");

        call("GET", "/v1/sandboxes/" + id, null);
        call("GET", "/v1/sandboxes/" + id + "/events", null);
        call("GET", "/v1/events", null);
        assertThat(answers).allSatisfy(a -> assertThat(a).doesNotContain(SECRET));
        assertThat(call("DELETE", "/v1/sandboxes/" + id, null).status()).isEqualTo(204);
        assertThat(service.dataDir.resolve("egress-ca/" + id)).doesNotExist();
    }

    /**
     * Under gVisor the same: the sandbox's own TLS client (python's, in the base template: gVisor's
     * network stack is its own, so the host's curl cannot stand in for it) trusts the interception
     * CA, its request carries the secret, and the value is in no file of the sandbox.
     */
    @Test
    void aGvisorSandboxsOwnRequestsGetTheSecretToo() throws Exception {
        ServiceFixture.assumeRuntime("gvisor");
        assertThat(call("POST", "/v1/secrets", "{\"name\": \"GVISOR_TOKEN\", \"value\": \"" + SECRET + "\"}").status()).isEqualTo(201);
        var created = call("POST", "/v1/sandboxes", "{\"template\": \"base\", \"runtime\": \"gvisor\", \"network\": "
                + POLICY.replace("API_TOKEN", "GVISOR_TOKEN") + "}");
        assertThat(created.status()).as(created.toString()).isEqualTo(201);
        String id = created.body().get("id").asText();
        try {
            String out = api.sh(id, "python3 -c \"import ssl, urllib.request as u; "
                    + "c = ssl.create_default_context(cafile='/etc/ssl/certs/ca-certificates.crt'); "
                    + "print(u.urlopen(u.Request('https://api.allowed.test/from-gvisor', headers={'Authorization': 'Bearer sandbox-own'}), "
                    + "context=c, timeout=20).read().decode())\"");
            assertThat(out).contains("ok GET").doesNotContain(SECRET);
            String seen = Files.readString(served.resolve("seen.log"));
            String request = seen.substring(seen.indexOf("GET /from-gvisor"));
            assertThat(request).contains("Authorization: Bearer " + SECRET).doesNotContain("sandbox-own");
            assertThat(SecretSearch.filesHolding(service.dataDir.resolve("btrfs/roots/" + id), SECRET)).isEmpty();
        } finally {
            call("DELETE", "/v1/sandboxes/" + id, null);
            call("DELETE", "/v1/secrets/GVISOR_TOKEN", null);
            Files.deleteIfExists(served.resolve("seen.log")); // the other tests count what they alone sent
        }
    }

    /** A template build's steps get the secret through the same header rules, and it lands in no file of the template. */
    @Test
    void aBuildStepUsesTheSecretAndTheTemplateNeverHoldsIt() throws Exception {
        assertThat(call("POST", "/v1/secrets", "{\"name\": \"API_TOKEN\", \"value\": \"" + SECRET + "\"}").status()).isBetween(200, 201);
        var body = new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode().put("name", "with-secret").put("from", "base");
        body.putArray("steps").addObject().put("run", "curl -sS --fail --max-time 10 -H 'Authorization: Bearer sandbox-own' "
                + "https://api.allowed.test/from-build > /from-build");
        body.set("network", new com.fasterxml.jackson.databind.ObjectMapper().readTree(POLICY));
        Files.deleteIfExists(served.resolve("seen.log"));
        assertThat(call("POST", "/v1/templates", body.toString()).status()).isEqualTo(202);
        io.stasis.testkit.Await.until("the build", java.time.Duration.ofMinutes(15),
                () -> !call("GET", "/v1/templates/with-secret", null).body().path("build").path("status").asText().equals("building"));
        var built = call("GET", "/v1/templates/with-secret", null).body();
        assertThat(built.get("status").asText()).as(built.toString()).isEqualTo("ready");
        assertThat(Files.readString(served.resolve("seen.log"))).contains("/from-build", "Authorization: Bearer " + SECRET)
                .doesNotContain("sandbox-own");
        Path template = service.dataDir.resolve("btrfs/templates/with-secret");
        assertThat(template.resolve("from-build")).content().contains("ok GET");
        assertThat(SecretSearch.filesHolding(template, SECRET)).as("files of the template holding the secret").isEmpty();
        assertThat(call("GET", "/v1/templates/with-secret/logs", null).body().toString()).doesNotContain(SECRET);
        assertThat(call("DELETE", "/v1/templates/with-secret", null).status()).isEqualTo(204);
    }

    private static String curl(int pid, Path ca, String... args) {
        var argv = new ArrayList<>(List.of("nsenter", "-t", Integer.toString(pid), "-n", "curl", "-sS", "--fail-with-body", "--max-time", "10",
                "--cacert", ca.toString(), "--resolve", "api.allowed.test:443:" + upstream.address(),
                "--resolve", "plain.allowed.test:443:" + upstream.address()));
        argv.addAll(List.of(args));
        return run(served, argv.toArray(String[]::new));
    }

    /** The status code, then the body. */
    private static String curlStatus(int pid, Path ca, String url) {
        var argv = List.of("nsenter", "-t", Integer.toString(pid), "-n", "curl", "-sS", "--max-time", "10", "--cacert", ca.toString(),
                "--resolve", "api.allowed.test:443:" + upstream.address(), "-w", "%{http_code}", "-o", served.resolve("body").toString(), url);
        String code = run(served, argv.toArray(String[]::new));
        try {
            return code + " " + Files.readString(served.resolve("body"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int initPid(String id) throws IOException {
        return pids(id).stream().min(Integer::compare).orElseThrow(() -> new AssertionError("no process of " + id));
    }

    /** Every process of the sandbox, from its pids cgroup. */
    private static List<Integer> pids(String id) throws IOException {
        Path procs = Path.of("/sys/fs/cgroup/pids/stasis/" + id + "/cgroup.procs");
        return Files.readAllLines(procs).stream().filter(l -> !l.isBlank()).map(Integer::parseInt).toList();
    }

    /** Reads every readable mapping of the process through /proc/PID/mem. */
    private static boolean memoryHolds(int pid, String value) throws IOException {
        byte[] needle = value.getBytes(StandardCharsets.UTF_8);
        try (var mem = new RandomAccessFile("/proc/" + pid + "/mem", "r")) {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/maps"))) {
                String[] f = line.split("\\s+");
                if (f[1].charAt(0) != 'r' || line.contains("[vvar") || line.contains("[vsyscall]")) continue;
                String[] range = f[0].split("-");
                long start = Long.parseUnsignedLong(range[0], 16);
                long end = Long.parseUnsignedLong(range[1], 16);
                for (long at = start; at < end; at += 1 << 20) {
                    int n = (int) Math.min(1 << 20, end - at);
                    byte[] chunk = new byte[n + needle.length];
                    try {
                        mem.seek(at);
                        mem.readFully(chunk, 0, n);
                    } catch (IOException e) {
                        break; // unreadable mapping (guard pages, device memory)
                    }
                    if (SecretSearch.indexOf(chunk, needle) >= 0) return true;
                }
            }
        }
        return false;
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) n++;
        return n;
    }

    private static String run(Path dir, String... argv) {
        try {
            var process = new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("timed out: " + String.join(" ", argv));
            }
            if (process.exitValue() != 0) throw new AssertionError("exit " + process.exitValue() + " from " + argv[0] + ": " + output);
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
