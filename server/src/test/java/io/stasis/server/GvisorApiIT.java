package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ForkRequest;
import io.stasis.testkit.Await;
import io.stasis.testkit.CounterLoop;
import io.stasis.testkit.TestNetnsHost;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Sandboxes under gVisor through the API, next to runc ones on the same service: the runtime is
 * chosen at create, shown, and kept by forks; commands, the files API both ways, the egress policy
 * and the resolver, hibernation and forks with running processes work as under runc.
 */
@Tag("root")
class GvisorApiIT {
    private static TestNetnsHost upstream;
    private static Path served;
    private static ServiceFixture service;
    private static RawApi api;

    @BeforeAll
    static void start() throws Exception {
        ServiceFixture.assumeRuntime("gvisor");
        upstream = TestNetnsHost.createAny();
        served = Files.createTempDirectory("stasis-upstream");
        Files.writeString(served.resolve("index.html"), "hello from upstream\n");
        upstream.serve(served, "python3", "-m", "http.server", "80", "--bind", upstream.address());
        upstream.awaitListening(80);
        service = ServiceFixture.start("--runtimes-allowed", "runc,gvisor", "--dns-names", "allowed.test=" + upstream.address());
        api = new RawApi(service.url, service.rootKey);
    }

    @AfterEach
    void deleteSandboxes() {
        service.deleteSandboxes();
    }

    @AfterAll
    static void stop() {
        try {
            if (api != null) api.close();
            if (service != null) service.close();
        } finally {
            if (upstream != null) upstream.close();
            if (served != null) ServiceFixture.deleteTree(served);
        }
    }

    private static String create(String extra) {
        return api.post("/v1/sandboxes", "{\"template\":\"tiny\",\"runtime\":\"gvisor\"" + extra + "}").get("id").asText();
    }

    @Test
    void aTenantHeldToGvisorStartsNothingNewInRunc() {
        String tid = api.post("/v1/tenants", "{\"name\": \"gvisor-only\"}").get("id").asText();
        String secret = api.post("/v1/tenants/" + tid + "/keys", "{}").get("secret").asText();
        try (var tenant = new RawApi(service.url, secret)) {
            String running = tenant.post("/v1/sandboxes", "{\"template\": \"tiny\"}").get("id").asText(); // runc: the default
            String stopped = tenant.post("/v1/sandboxes", "{\"template\": \"tiny\"}").get("id").asText();
            tenant.post("/v1/sandboxes/" + stopped + "/stop", null);
            var held = api.call("PATCH", "/v1/tenants/" + tid, "{\"quota\": {\"runtimes\": [\"gvisor\"]}}");
            assertThat(held.status()).isEqualTo(200);
            assertThat(held.body().path("quota").path("runtimes").toString()).isEqualTo("[\"gvisor\"]");
            var made = tenant.post("/v1/sandboxes", "{\"template\": \"tiny\"}");
            assertThat(made.get("runtime").asText()).as("a create naming no runtime gets one the tenant may use").isEqualTo("gvisor");
            for (var refused : List.of(tenant.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\", \"runtime\": \"runc\"}"),
                    tenant.call("POST", "/v1/sandboxes/" + running + "/fork", "{}"),
                    tenant.call("POST", "/v1/sandboxes/" + stopped + "/start", null))) {
                assertThat(refused.status()).as(refused.body().toString()).isEqualTo(403);
                assertThat(refused.body().path("error").path("code").asText()).isEqualTo("forbidden");
                assertThat(refused.body().path("error").path("message").asText()).contains("only in gvisor");
            }
            assertThat(tenant.sh(running, "echo still")).as("what runs keeps running").isEqualTo("still\n");
            var unknown = api.call("PATCH", "/v1/tenants/" + tid, "{\"quota\": {\"runtimes\": [\"kata\"]}}");
            assertThat(unknown.status()).isEqualTo(422);
            assertThat(api.call("PATCH", "/v1/tenants/" + tid, "{\"quota\": {\"runtimes\": []}}").status()).isEqualTo(422);
            for (String id : List.of(running, stopped, made.get("id").asText())) tenant.call("DELETE", "/v1/sandboxes/" + id, null);
        }
        assertThat(api.call("DELETE", "/v1/tenants/" + tid, null).status()).isEqualTo(204);
    }

    @Test
    void aGvisorSandboxRunsBehindGvisorsKernelAndSharesItsFilesWithTheApi() {
        var sandbox = service.client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").runtime("gvisor").build());
        var runc = service.client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
        assertThat(sandbox.runtime()).isEqualTo("gvisor");
        assertThat(service.client.sandboxes().get(sandbox.id()).runtime()).isEqualTo("gvisor");
        assertThat(runc.runtime()).isEqualTo("runc");
        // gVisor's sentry answers for the kernel: not the host's version string.
        String kernel = sandbox.exec("cat", "/proc/version").stdout();
        assertThat(kernel).isNotEqualTo(runc.exec("cat", "/proc/version").stdout());
        assertThat(sandbox.exec("dmesg").stdout()).contains("gVisor");

        sandbox.files().write("/tmp/from-api.txt", "written through the API");
        assertThat(sandbox.exec("cat", "/tmp/from-api.txt").stdout()).isEqualTo("written through the API");
        assertThat(sandbox.exec("sh", "-c", "echo written inside > /root/inside.txt").exitCode()).isZero();
        assertThat(new String(sandbox.files().read("/root/inside.txt"))).isEqualTo("written inside\n");
        sandbox.delete();
        runc.delete();
    }

    @Test
    void backgroundProcessesRunAndAVolumeIsSharedWithARuncSandbox() {
        var volume = service.client.volumes().create("gvisor-shared", 64);
        var sandbox = service.client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").runtime("gvisor")
                .volume(volume.id(), "/data").build());
        var runc = service.client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").volume(volume.id(), "/data").build());

        var writer = sandbox.processes().start("sh", "-c", "echo from-gvisor > /data/note; echo out; exit 3");
        assertThat(writer.waitFor(Duration.ofSeconds(20)).exitCode()).isEqualTo(3);
        assertThat(writer.output().stdout()).isEqualTo("out\n");
        assertThat(runc.exec("cat", "/data/note").stdout()).isEqualTo("from-gvisor\n");
        sandbox.delete();
        runc.delete();
        service.client.volumes().delete(volume.id(), true);
    }

    /**
     * Input reaches a process through stasis-init's socket (a FIFO made inside the sentry is out of
     * the host's reach): a pipe until it is closed, a shell that keeps its variables across a
     * hibernation, and a terminal that sees its size, resizes and comes back from hibernation.
     */
    @Test
    void standardInputAndTerminalsWorkAndSurviveHibernation() {
        String id = create(",\"lifecycle\":{\"pauseAfterIdle\":null,\"hibernateAfterIdle\":null}");
        long cat = api.post("/v1/sandboxes/" + id + "/processes", "{\"cmd\":[\"cat\"],\"stdin\":true}").get("pid").asLong();
        api.processStdin(id, cat, "hello\n");
        api.processStdin(id, cat, "world\n");
        Await.until("the echo", Duration.ofSeconds(10), () -> api.processStdout(id, cat).equals("hello\nworld\n"));
        api.post("/v1/sandboxes/" + id + "/processes/" + cat + "/stdin/close", null);
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + cat + "/wait?timeoutMs=10000").get("exitCode").asInt()).isZero();
        var closed = api.call("POST", "/v1/sandboxes/" + id + "/processes/" + cat + "/stdin", "late");
        assertThat(closed.errorCode()).isEqualTo("invalid_state");

        long shell = api.post("/v1/sandboxes/" + id + "/processes", "{\"cmd\":[\"sh\"],\"stdin\":true}").get("pid").asLong();
        api.processStdin(id, shell, "x=41\n");
        api.post("/v1/sandboxes/" + id + "/hibernate", null);
        api.processStdin(id, shell, "echo answer $((x + 1))\n"); // wakes it
        Await.until("the shell's answer after hibernation", Duration.ofSeconds(15), () -> api.processStdout(id, shell).contains("answer 42"));

        long tty = api.post("/v1/sandboxes/" + id + "/processes", "{\"cmd\":[\"sh\"],\"pty\":{\"cols\":80,\"rows\":24}}")
                .get("pid").asLong();
        api.processStdin(id, tty, "stty size; tty\n");
        Await.until("the size and the tty", Duration.ofSeconds(10),
                () -> api.processStdout(id, tty).contains("24 80") && api.processStdout(id, tty).contains("/dev/pts/"));
        api.post("/v1/sandboxes/" + id + "/processes/" + tty + "/resize", "{\"cols\":100,\"rows\":30}");
        api.processStdin(id, tty, "stty size; export KEPT=yes\n");
        Await.until("the new size", Duration.ofSeconds(10), () -> api.processStdout(id, tty).contains("30 100"));
        api.post("/v1/sandboxes/" + id + "/hibernate", null);
        api.processStdin(id, tty, "echo kept=$KEPT\n");
        Await.until("the terminal after hibernation", Duration.ofSeconds(15), () -> api.processStdout(id, tty).contains("kept=yes"));
        api.processStdin(id, tty, "exit 5\n");
        assertThat(api.get("/v1/sandboxes/" + id + "/processes/" + tty + "/wait?timeoutMs=10000").get("exitCode").asInt()).isEqualTo(5);
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @Test
    void theEgressPolicyAndTheResolverHoldAsUnderRunc() {
        String denied = create("");
        assertThat(api.sh(denied, "wget -T 3 -q -O - http://" + upstream.address() + "/ 2>&1; true")).doesNotContain("hello from upstream");
        assertThat(api.sh(denied, "cat /etc/resolv.conf")).contains("nameserver " + api.get("/v1/sandboxes/" + denied + "/network").get("gateway").asText());

        String allowed = create(",\"network\":{\"egress\":{\"default\":\"deny\",\"allow\":[\"allowed.test\",\"" + upstream.address() + "/32\"]}}");
        assertThat(api.sh(allowed, "wget -T 5 -q -O - http://" + upstream.address() + "/")).isEqualTo("hello from upstream\n");
        assertThat(api.sh(allowed, "nslookup allowed.test 2>&1; true")).contains(upstream.address());
        api.call("DELETE", "/v1/sandboxes/" + denied, null);
        api.call("DELETE", "/v1/sandboxes/" + allowed, null);
    }

    @Test
    void hibernationAndForksKeepTheRunningProcessesAndTheRuntime() {
        var sandbox = service.client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").runtime("gvisor")
                .build());
        api.sh(sandbox.id(), CounterLoop.SCRIPT);
        Await.until("counting", Duration.ofSeconds(10), () -> count(sandbox.id()) > 3);

        long before = count(sandbox.id());
        assertThat(sandbox.hibernate().state()).isEqualTo("hibernated");
        assertThat(sandbox.resume().state()).isEqualTo("running");
        Await.until("counting on after the resume", Duration.ofSeconds(10), () -> count(sandbox.id()) > before + 3);

        var forks = sandbox.fork(ForkRequest.builder().count(1).build());
        var child = forks.getFirst();
        assertThat(child.runtime()).isEqualTo("gvisor");
        long at = count(child.id());
        Await.until("the fork counting on its own", Duration.ofSeconds(10), () -> count(child.id()) > at + 3);
        assertThat(sandbox.checkpoints()).allSatisfy(c -> assertThat(c.info().runtime()).isEqualTo("gvisor"));
        child.delete();
        sandbox.delete();
    }

    @Test
    void aRuntimeTheServiceDoesNotKnowIsRefusedAndARestoreKeepsTheCheckpointsOwn() {
        var unknown = api.call("POST", "/v1/sandboxes", "{\"runtime\":\"kata\"}");
        assertThat(unknown.status()).isEqualTo(422);
        assertThat(unknown.errorCode()).isEqualTo("invalid_request");
        assertThat(unknown.body().at("/error/message").asText()).contains("kata").contains("runc, gvisor");
        var withCheckpoint = api.call("POST", "/v1/sandboxes", "{\"runtime\":\"gvisor\",\"fromCheckpoint\":\"ckpt_0000000000000000\"}");
        assertThat(withCheckpoint.status()).isEqualTo(422);
        assertThat(withCheckpoint.errorCode()).isEqualTo("invalid_request");
    }

    /** The counter's value, read through the files API (-1 before the loop first wrote it). */
    private static long count(String id) {
        var response = api.call("GET", "/v1/sandboxes/" + id + "/files?path=/tmp/count", null);
        String text = response.status() == 200 ? response.body().asText().strip() : "";
        return text.isEmpty() ? -1 : Long.parseLong(text);
    }
}
