package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.runtime.runc.RunscConfig;
import io.stasis.testkit.Await;
import io.stasis.testkit.CounterLoop;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Standby end to end: the memory really goes back to the host (the sandbox's cgroup charge falls
 * by 90% and more), and everything comes back: memory byte for byte, a REPL's variables, a
 * counter, a listening server, an established connection inside. Also through the idle policy and
 * auto-resume.
 */
@Tag("root")
class StandbyIT {
    private static final String COUNTER = CounterLoop.SCRIPT;
    private static final String CALM = "\"lifecycle\": {\"pauseAfterIdle\": null, \"standbyAfterIdle\": null, \"hibernateAfterIdle\": null}";
    /** Holds 300 MiB of random bytes and answers each line on /tmp/in with its counter and the bytes' SHA-256. */
    private static final String REPL = """
            import hashlib, os
            buf = bytearray(os.urandom(300 << 20))
            x = 41
            with open('/tmp/digest', 'w') as f: f.write(hashlib.sha256(buf).hexdigest())
            while True:
                with open('/tmp/in') as fin:
                    for line in fin:
                        x += 1
                        with open('/tmp/out', 'w') as out: out.write('%d %s\\n' % (x, hashlib.sha256(buf).hexdigest()))
            """;
    private static ServiceFixture service;
    private static RawApi api;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start("--idle-check", "200ms", "--runtimes-allowed", RunscConfig.installedAndVerified() ? "runc,gvisor" : "runc");
        api = new RawApi(service.url, service.rootKey);
    }

    @AfterEach
    void deleteSandboxes() {
        service.deleteSandboxes();
    }

    @AfterAll
    static void stop() {
        api.close();
        service.close();
    }

    private static String state(String id) {
        return api.get("/v1/sandboxes/" + id).get("state").asText();
    }

    /** Bytes of memory charged to the sandbox's cgroup (not its swap). */
    private static long charged(String id) {
        try {
            return Long.parseLong(Files.readString(Path.of("/sys/fs/cgroup/memory/stasis/" + id + "/memory.usage_in_bytes")).strip());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The counter as the root on the host has it, without waking the sandbox. */
    private static String counterFile(String id) {
        try {
            return Files.readString(service.dataDir.resolve("btrfs/roots/" + id + "/tmp/count")).strip();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static long counter(String id) {
        String text = counterFile(id);
        return text.isEmpty() ? -1 : Long.parseLong(text); // empty between the shell's truncate and write
    }

    /** Under gVisor the memory is the sentry's memory file: the cgroup's reclaim pages it out. */
    @EachRuntime
    void theMemoryGoesBackToTheHostAndComesBackByteForByte(String runtime) throws Exception {
        ServiceFixture.assumeRuntime(runtime);
        String id = api.post("/v1/sandboxes", "{\"template\": \"base\", \"runtime\": \"" + runtime + "\", \"resources\": {\"memoryMb\": 1024}, "
                + CALM + "}").get("id").asText();
        var sandbox = service.client.sandboxes().get(id);
        sandbox.files().write("/root/repl.py", REPL);
        api.sh(id, "mkfifo /tmp/in /tmp/out");
        api.post("/v1/sandboxes/" + id + "/processes", "{\"cmd\": [\"python3\", \"/root/repl.py\"]}");
        Await.until("300 MiB resident", Duration.ofSeconds(60), () -> !api.sh(id, "cat /tmp/digest 2>/dev/null; true").isBlank());
        String digest = api.sh(id, "cat /tmp/digest").strip();
        long before = charged(id);
        assertThat(before).isGreaterThan(300L << 20);

        var standby = api.post("/v1/sandboxes/" + id + "/standby", null);
        assertThat(standby.get("state").asText()).isEqualTo("standby");
        assertThat(api.post("/v1/sandboxes/" + id + "/standby", null).get("state").asText()).as("idempotent").isEqualTo("standby");
        Await.until("90% of the memory given back", Duration.ofSeconds(30), () -> charged(id) <= before / 10);
        assertThat(state(id)).as("a read of the sandbox does not wake it").isEqualTo("standby");

        // Auto-resume: the exec wakes it; the REPL answers with its variable and the same bytes.
        String answer = api.sh(id, "echo q > /tmp/in; cat /tmp/out").strip();
        assertThat(answer).isEqualTo("42 " + digest);
        assertThat(state(id)).isEqualTo("running");
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @Test
    void processesAServerAndAnEstablishedConnectionGoOnAfterStandby() throws Exception {
        String id = api.post("/v1/sandboxes", "{\"template\": \"tiny\", " + CALM + "}").get("id").asText();
        api.sh(id, COUNTER + " httpd -p 8080 -h /etc; (sleep 100000 | nc -l -p 9000 > /tmp/received) >/dev/null 2>&1 & sleep 0.2; "
                + "((while true; do echo tick; sleep 0.05; done) | nc 127.0.0.1 9000) >/dev/null 2>&1 &");
        Await.until("counting and receiving", Duration.ofSeconds(10),
                () -> !counterFile(id).isEmpty() && Long.parseLong(api.sh(id, "wc -l < /tmp/received").strip()) > 5);

        assertThat(api.post("/v1/sandboxes/" + id + "/standby", null).get("state").asText()).isEqualTo("standby");
        String frozen = counterFile(id);
        while (frozen.isEmpty()) frozen = counterFile(id);
        LockSupport.parkNanos(Duration.ofMillis(500).toNanos()); // no CPU: nothing may move meanwhile
        assertThat(counterFile(id)).isEqualTo(frozen);

        assertThat(api.post("/v1/sandboxes/" + id + "/resume", null).get("state").asText()).isEqualTo("running");
        long frozenAt = Long.parseLong(frozen);
        Await.until("counting again", Duration.ofSeconds(10), () -> counter(id) > frozenAt);
        assertThat(api.sh(id, "wget -T 5 -q -O - http://127.0.0.1:8080/passwd | head -1")).startsWith("root:");
        long received = Long.parseLong(api.sh(id, "wc -l < /tmp/received").strip());
        Await.until("data over the connection again", Duration.ofSeconds(10),
                () -> Long.parseLong(api.sh(id, "wc -l < /tmp/received").strip()) > received + 5);
        assertThat(api.sh(id, "netstat -tn | grep -c ESTABLISHED").strip()).isEqualTo("2");
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }

    @Test
    void theIdlePolicyPutsAnIdleSandboxInStandbyAndACallWakesIt() {
        String id = api.post("/v1/sandboxes", "{\"template\": \"tiny\", \"lifecycle\": {\"pauseAfterIdle\": null, "
                + "\"standbyAfterIdle\": \"1s\", \"hibernateAfterIdle\": null}}").get("id").asText();
        assertThat(api.get("/v1/sandboxes/" + id).get("lifecycle").get("standbyAfterIdle").asText()).isEqualTo("1s");
        api.sh(id, "echo kept > /root/kept");
        Await.until("standby by the idle policy", Duration.ofSeconds(15), () -> state(id).equals("standby"));
        var events = api.get("/v1/sandboxes/" + id + "/events").toString();
        assertThat(events).contains("\"to\":\"standby\"").contains("\"reason\":\"idle\"");
        assertThat(api.sh(id, "cat /root/kept")).isEqualTo("kept\n");
        assertThat(state(id)).isEqualTo("running");
        // Refused from where it cannot go, with the state named.
        api.post("/v1/sandboxes/" + id + "/stop", null);
        var refused = api.call("POST", "/v1/sandboxes/" + id + "/standby", null);
        assertThat(refused.status()).isEqualTo(409);
        assertThat(refused.errorCode()).isEqualTo("invalid_state");
        api.call("DELETE", "/v1/sandboxes/" + id, null);
    }
}
