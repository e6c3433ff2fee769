package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.testkit.HostLeaks;
import io.stasis.testkit.PostgresExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Test;

/**
 * The service on a PostgreSQL catalog (a real server from Debian's packages): a single service's
 * SQLite catalog moves into it at the first start, sandboxes keep their files and processes across
 * a SIGKILL and a hibernation, and a second service on the same database is refused.
 */
@Tag("root")
class PostgresCatalogIT {
    @RegisterExtension
    static final PostgresExtension postgres = new PostgresExtension();

    @Test
    void aServiceMovesOntoPostgresqlKeepsItsSandboxesAcrossAKillAndRefusesASecondService() throws Exception {
        Path dataDir = Files.createTempDirectory("stasis-pg-catalog-it");
        Path otherDataDir = Files.createTempDirectory("stasis-pg-catalog-it-other");
        Path log = Path.of("target", "postgres-catalog-it-service.log").toAbsolutePath();
        String catalog = postgres.server().newDatabase();
        String running = null;
        String hibernated = null;
        try {
            // 1. A single service on its embedded SQLite catalog.
            try (var first = ServiceProcess.start(dataDir, log);
                 var api = new RawApi(first.url, rootKey(dataDir))) {
                running = api.post("/v1/sandboxes", "{\"name\": \"keeps-running\", \"metadata\": {\"team\": \"x\"}}").get("id").asText();
                exec(api, running, "echo from-sqlite > /root/state; sleep 1000 &");
            }

            // 2. The same data directory on PostgreSQL: the catalog moves, the sandbox is still there.
            try (var second = ServiceProcess.start(dataDir, log, Map.of(), "--catalog", catalog);
                 var api = new RawApi(second.url, rootKey(dataDir))) {
                assertThat(dataDir.resolve("stasis.db")).doesNotExist();
                assertThat(dataDir.resolve("stasis.db.moved-to-postgresql")).exists();
                var sandbox = api.get("/v1/sandboxes/" + running);
                assertThat(sandbox.get("state").asText()).isEqualTo("running");
                assertThat(sandbox.get("name").asText()).isEqualTo("keeps-running");
                assertThat(api.get("/v1/sandboxes?metadata.team=x").get("items")).hasSize(1);
                assertThat(exec(api, running, "cat /root/state")).isEqualTo("from-sqlite\n");

                hibernated = api.post("/v1/sandboxes", "{}").get("id").asText();
                exec(api, hibernated, "echo in-memory > /tmp/m; (i=0; while true; do i=$((i+1)); echo $i > /root/count; sleep 0.05; done) &");
                api.post("/v1/sandboxes/" + hibernated + "/hibernate", "{}");
                assertThat(api.get("/v1/sandboxes/" + hibernated).get("state").asText()).isEqualTo("hibernated");

                // 3. A second service of the same node name (the host name) on the same database is refused, naming the first.
                var refused = ServiceProcess.launch(otherDataDir, log, Map.of(), "--catalog", catalog);
                assertThat(refused.process().waitFor(120, TimeUnit.SECONDS)).as("the refused service ends").isTrue();
                assertThat(refused.process().exitValue()).isEqualTo(1);
                assertThat(ServiceProcess.logTail(log, 40)).contains("is already running on the catalog");

                second.kill();
            }

            // 4. After a SIGKILL, a new start on the catalog adopts the running sandbox and resumes the hibernated one.
            try (var third = ServiceProcess.start(dataDir, log, Map.of(), "--catalog", catalog);
                 var api = new RawApi(third.url, rootKey(dataDir))) {
                assertThat(api.get("/v1/sandboxes/" + running).get("state").asText()).isEqualTo("running");
                assertThat(exec(api, running, "cat /root/state; ps -o args | grep -c '^sleep 1000'")).isEqualTo("from-sqlite\n1\n");
                api.post("/v1/sandboxes/" + hibernated + "/resume", "{}");
                assertThat(exec(api, hibernated, "cat /tmp/m")).isEqualTo("in-memory\n");
                long before = Long.parseLong(exec(api, hibernated, "cat /root/count").strip());
                Thread.sleep(300);
                assertThat(Long.parseLong(exec(api, hibernated, "cat /root/count").strip())).as("the counter goes on").isGreaterThan(before);
                assertThat(api.get("/v1/events?limit=1000").get("items").toString()).contains("\"to\":\"hibernated\"");
                api.call("DELETE", "/v1/sandboxes/" + running, null);
                api.call("DELETE", "/v1/sandboxes/" + hibernated, null);
                running = null;
                hibernated = null;
            }
            assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
            assertThat(HostLeaks.loopDevicesBackedBy(dataDir, Duration.ofSeconds(15))).isEmpty();
        } finally {
            if (running != null || hibernated != null) {
                ServiceProcess.removeLeftovers(dataDir, log, running, "--catalog", catalog);
            }
            for (String left : new String[] {running, hibernated}) {
                if (left != null) assertThat(HostLeaks.processesOf(Set.of(new SandboxId(left)))).isEmpty();
            }
            ServiceFixture.deleteTree(dataDir);
            ServiceFixture.deleteTree(otherDataDir);
        }
    }

    private static String rootKey(Path dataDir) throws Exception {
        return Files.readString(dataDir.resolve("root.key")).strip();
    }

    private static String exec(RawApi api, String sandbox, String script) throws Exception {
        var body = new com.fasterxml.jackson.databind.ObjectMapper().createObjectNode();
        body.putArray("cmd").add("sh").add("-c").add(script);
        var result = api.post("/v1/sandboxes/" + sandbox + "/exec", body.toString());
        assertThat(result.get("exitCode").asInt()).as("exit code of %s: %s", script, result).isZero();
        return result.get("stdout").asText();
    }
}
