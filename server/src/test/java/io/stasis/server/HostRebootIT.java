package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.host.ToolRunner;
import io.stasis.testkit.Await;
import io.stasis.testkit.CounterLoop;
import io.stasis.testkit.HostLeaks;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A host reboot with the data directory kept, simulated while the service is down: every process
 * of every sandbox dies, their cgroups go, the standby swap is off, the pool and volumes are
 * unmounted and their loop devices detached, the nftables ruleset is empty; runc's state (in the
 * data directory) stays behind, stale. Each sandbox must then come back as docs/API.md's table of
 * states promises: hibernated ones with their processes, the others stopped ({@code processes_lost})
 * with every acknowledged file, each usable, and nothing left on the host once they are deleted.
 */
@Tag("root")
class HostRebootIT {
    private static final String CALM = "{\"lifecycle\": {\"pauseAfterIdle\": null, \"standbyAfterIdle\": null, \"hibernateAfterIdle\": null}}";
    private static final List<String> STATES = List.of("running", "paused", "standby", "hibernated", "stopped");

    @Test
    void eachSandboxComesBackAsItsStatePromises() throws Exception {
        Path dataDir = Files.createTempDirectory("stasis-reboot-it", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx--x--x")));
        Path log = Path.of("target", "host-reboot-it-service.log").toAbsolutePath();
        var network = TestNetworkFlags.forDataDir(dataDir);
        String table = network.get(network.indexOf("--network-table") + 1);
        var sandboxes = new LinkedHashMap<String, String>(); // state before the reboot -> sandbox
        String volume;
        var before = ServiceProcess.start(dataDir, log, Map.of(), "--warm-pool", "0", "--no-warm-up");
        try (var api = api(before, dataDir)) {
            volume = api.post("/v1/volumes", "{\"name\": \"kept\", \"sizeMb\": 64}").get("id").asText();
            assertThat(api.call("PUT", "/s3/" + volume + "/acknowledged", "in the volume").status()).isEqualTo(200);
            for (String state : STATES) {
                String id = api.post("/v1/sandboxes", "{\"volumes\": [{\"volume\": \"kept\", \"path\": \"/data\"}], "
                        + CALM.substring(1)).get("id").asText();
                api.sh(id, CounterLoop.SCRIPT);
                Await.until("counting", Duration.ofSeconds(10), () -> !api.sh(id, "cat /tmp/count 2>/dev/null; true").isBlank());
                assertThat(api.call("PUT", "/v1/sandboxes/" + id + "/files?path=/root/acknowledged", "kept " + id).status()).isEqualTo(200);
                api.bringTo(id, state);
                sandboxes.put(state, id);
            }
        }
        before.kill();
        reboot(dataDir, sandboxes.values().stream().map(SandboxId::new).collect(Collectors.toSet()), table);

        try (var after = ServiceProcess.start(dataDir, log, Map.of(), "--warm-pool", "0", "--no-warm-up"); var api = api(after, dataDir)) {
            for (var entry : sandboxes.entrySet()) {
                String id = entry.getValue();
                JsonNode found = api.get("/v1/sandboxes/" + id);
                switch (entry.getKey()) {
                    case "hibernated" -> {
                        assertThat(found.get("state").asText()).as("a hibernated sandbox is in its image").isEqualTo("hibernated");
                        api.post("/v1/sandboxes/" + id + "/resume", null);
                        long count = Long.parseLong(api.sh(id, "cat /tmp/count").strip());
                        Await.until("the restored counter to go on", Duration.ofSeconds(10),
                                () -> Long.parseLong(api.sh(id, "cat /tmp/count").strip()) > count);
                    }
                    case "stopped" -> {
                        assertThat(found.get("state").asText()).isEqualTo("stopped");
                        api.post("/v1/sandboxes/" + id + "/start", null);
                    }
                    default -> {
                        assertThat(found.get("state").asText()).as(entry.getKey() + " before the reboot").isEqualTo("stopped");
                        assertThat(found.get("stateReason").asText()).isEqualTo("processes_lost");
                        api.post("/v1/sandboxes/" + id + "/start", null);
                    }
                }
                assertThat(api.sh(id, "echo alive")).isEqualTo("alive\n");
                assertThat(api.call("GET", "/v1/sandboxes/" + id + "/files?path=/root/acknowledged", null).body().asText()).isEqualTo("kept " + id);
                assertThat(api.sh(id, "cat /data/acknowledged")).as("the volume, mounted again").isEqualTo("in the volume");
                assertThat(api.sh(id, "awk '$1 == \"eth0\" && $2 == \"00000000\"' /proc/net/route | wc -l").strip())
                        .as("its network is plugged again: eth0 and a default route").isEqualTo("1");
            }
            for (String id : sandboxes.values()) assertThat(api.call("DELETE", "/v1/sandboxes/" + id, null).status()).isEqualTo(204);
            assertThat(api.call("DELETE", "/v1/volumes/" + volume, null).status()).isEqualTo(204);
        }
        var ids = sandboxes.values().stream().map(SandboxId::new).collect(Collectors.toSet());
        assertThat(HostLeaks.processesOf(ids)).isEmpty();
        assertThat(HostLeaks.cgroupsOf(ids)).isEmpty();
        assertThat(HostLeaks.mountsUnder(dataDir)).isEmpty();
        assertThat(HostLeaks.swapFilesUnder(dataDir)).isEmpty();
        assertThat(HostLeaks.loopDevicesBackedBy(dataDir, Duration.ofSeconds(15))).isEmpty();
        assertThat(HostLeaks.nftTables(table)).isEmpty();
        ServiceFixture.deleteTree(dataDir);
    }

    private static RawApi api(ServiceProcess service, Path dataDir) throws IOException {
        return new RawApi(service.url, Files.readString(dataDir.resolve("root.key")).strip());
    }

    /** What a reboot takes from the host, here: processes, cgroups, swap, mounts and loop devices, the ruleset. */
    private static void reboot(Path dataDir, Set<SandboxId> sandboxes, String table) throws Exception {
        // A frozen task takes its SIGKILL only once thawed.
        for (String cgroup : HostLeaks.cgroupsOf(sandboxes)) {
            Path freezer = Path.of(cgroup, "freezer.state");
            if (Files.exists(freezer)) Files.writeString(freezer, "THAWED");
        }
        Await.until("every process of the sandboxes to die", Duration.ofSeconds(30), () -> {
            for (String cgroup : HostLeaks.cgroupsOf(sandboxes)) {
                try (var pids = Files.lines(Path.of(cgroup, "cgroup.procs"))) {
                    pids.map(Long::parseLong).map(ProcessHandle::of).flatMap(Optional::stream).forEach(ProcessHandle::destroyForcibly);
                } catch (IOException e) {
                    // not this controller's kind of directory, or gone meanwhile
                }
            }
            return HostLeaks.processesOf(sandboxes).isEmpty();
        });
        Await.until("the sandboxes' cgroups to go", Duration.ofSeconds(30), () -> {
            HostLeaks.cgroupsOf(sandboxes).stream().sorted(Comparator.comparing(String::length).reversed())
                    .forEach(cgroup -> Path.of(cgroup).toFile().delete());
            return HostLeaks.cgroupsOf(sandboxes).isEmpty();
        });
        for (String swap : HostLeaks.swapFilesUnder(dataDir)) tool("swapoff", swap);
        for (String mount : HostLeaks.mountsUnder(dataDir).stream().sorted(Comparator.comparing(String::length).reversed()).toList())
            tool("umount", mount);
        for (String loop : HostLeaks.loopDevicesBackedBy(dataDir)) tool("losetup", "--detach", "/dev/" + loop.split(" ")[0]);
        for (String family : List.of("ip", "inet", "bridge")) ToolRunner.run(List.of("nft", "delete", "table", family, table), Duration.ofSeconds(30));
        assertThat(HostLeaks.nftTables(table)).isEmpty();
    }

    private static void tool(String... argv) throws Exception {
        var result = ToolRunner.run(List.of(argv), Duration.ofSeconds(60));
        assertThat(result.exitCode()).as(String.join(" ", argv) + ": " + result.stderrTail()).isZero();
    }
}
