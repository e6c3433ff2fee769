package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.testkit.Await;
import io.stasis.testkit.CuttableRelay;
import io.stasis.testkit.HostLeaks;
import io.stasis.testkit.PostgresExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Map;
import java.util.Set;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Two nodes on one PostgreSQL catalog, on one host (own data directories and ports): each answers
 * for every sandbox, passing requests to the sandbox's node; a restart of one leaves the other's
 * sandboxes alone; a node that is gone makes its sandboxes answer {@code node_unavailable} until it
 * is back, processes and files intact.
 */
@Tag("root")
class NodesIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    @RegisterExtension
    static final PostgresExtension postgres = new PostgresExtension();

    @Test
    void anyNodeAnswersForEverySandboxAndANodesSandboxesWaitForItWhileItIsGone() throws Exception {
        Path dataA = Files.createTempDirectory("stasis-nodes-it-a");
        Path dataB = Files.createTempDirectory("stasis-nodes-it-b");
        Path dataC = Files.createTempDirectory("stasis-nodes-it-c");
        Path logA = Path.of("target", "nodes-it-a.log").toAbsolutePath();
        Path logB = Path.of("target", "nodes-it-b.log").toAbsolutePath();
        Path logC = Path.of("target", "nodes-it-c.log").toAbsolutePath();
        String catalog = postgres.server().newDatabase();
        String[] flagsA = {"--catalog", catalog, "--node-name", "node-a"};
        String[] flagsB = {"--catalog", catalog, "--node-name", "node-b"};
        var started = new ArrayList<ServiceProcess>();
        String onA = null;
        String onB = null;
        try {
            var a = track(started, ServiceProcess.start(dataA, logA, Map.of(), flagsA));
            String key = Files.readString(dataA.resolve("root.key")).strip();
            // A node without the root key's file refuses to start rather than lock the others out.
            var refused = ServiceProcess.launch(dataB, logB, Map.of(), flagsB);
            assertThat(refused.process().waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            assertThat(ServiceProcess.logTail(logB, 30)).contains("the catalog has a root key", "is missing");
            Files.copy(dataA.resolve("root.key"), dataB.resolve("root.key"));
            var b = track(started, ServiceProcess.start(dataB, logB, Map.of(), flagsB));
            // A third node, given the root key by file name.
            var c = track(started, ServiceProcess.start(dataC, logC, Map.of(), "--catalog", catalog, "--node-name", "node-c",
                    "--root-key-file", dataA.resolve("root.key").toString()));

            try (var apiA = new RawApi(a.url, key); var apiB = new RawApi(b.url, key); var apiC = new RawApi(c.url, key)) {
                var nodes = apiB.get("/v1/nodes").get("items");
                assertThat(names(nodes)).containsExactly("node-a", "node-b", "node-c");
                assertThat(nodes.get(0).get("alive").asBoolean()).isTrue();
                assertThat(nodes.get(0).get("local").asBoolean()).isFalse();
                assertThat(nodes.get(1).get("local").asBoolean()).isTrue();
                assertThat(nodes.get(0).get("advertiseUrl").asText()).isEqualTo(a.url);
                assertThat(nodes.get(0).get("capacity").get("memoryTotalMb").asLong()).isPositive();

                onA = apiA.post("/v1/sandboxes", "{\"name\": \"on-a\"}").get("id").asText();
                onB = apiB.post("/v1/sandboxes", "{\"name\": \"on-b\"}").get("id").asText();

                // Through B, A's sandbox: its record, an exec, a file written and read, a process and its output.
                assertThat(apiB.get("/v1/sandboxes/" + onA).get("name").asText()).isEqualTo("on-a");
                assertThat(exec(apiB, onA, "echo from-b > /root/f; cat /root/f")).isEqualTo("from-b\n");
                assertThat(apiB.call("PUT", "/v1/sandboxes/" + onA + "/files?path=/root/put.txt", "written through b").status()).isLessThan(300);
                assertThat(exec(apiA, onA, "cat /root/put.txt")).isEqualTo("written through b");
                assertThat(apiB.call("GET", "/v1/sandboxes/" + onA + "/files?path=/root/put.txt", null).body().asText()).isEqualTo("written through b");
                long pid = apiB.post("/v1/sandboxes/" + onA + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"echo started; sleep 1000\"]}").get("pid").asLong();
                String output = "/v1/sandboxes/" + onA + "/processes/" + pid + "/output";
                Await.until("the process's output through b", Duration.ofSeconds(10), () ->
                        apiB.get(output).get("stdout").asText().equals("started\n"));
                // A file watch on A's sandbox, opened through B: its events stream back as they happen.
                try (var http = java.net.http.HttpClient.newHttpClient()) {
                    var lines = new java.util.concurrent.LinkedBlockingQueue<String>();
                    var watch = http.sendAsync(java.net.http.HttpRequest.newBuilder(java.net.URI.create(b.url + "/v1/sandboxes/" + onA
                                    + "/files/watch?path=/root&recursive=true")).header("Authorization", "Bearer " + key).build(),
                            java.net.http.HttpResponse.BodyHandlers.ofLines()).thenAccept(response -> response.body().forEach(lines::add));
                    Await.until("the watch to be in place", Duration.ofSeconds(10), () -> lines.stream().anyMatch(l -> l.contains("ready")));
                    exec(apiA, onA, "echo x > /root/watched-through-b");
                    Await.until("the change through b", Duration.ofSeconds(10), () -> lines.stream().anyMatch(l -> l.contains("watched-through-b")));
                    watch.cancel(true);
                }
                // A checkpoint of A's sandbox taken, read and forked through B: it and the fork are on A.
                String checkpoint = apiB.post("/v1/sandboxes/" + onA + "/checkpoints", "{\"memory\": false}").get("id").asText();
                assertThat(apiB.get("/v1/checkpoints/" + checkpoint).get("sandboxId").asText()).isEqualTo(onA);
                assertThat(apiB.get("/v1/checkpoints").get("items").toString()).contains(checkpoint);
                String fork = apiB.post("/v1/sandboxes/" + onA + "/fork", "{\"checkpoint\": \"" + checkpoint + "\"}")
                        .get("items").get(0).get("id").asText();
                assertThat(exec(apiB, fork, "cat /root/f")).isEqualTo("from-b\n");
                assertThat(apiB.get("/v1/nodes").get("items").get(0).get("sandboxes").asInt()).as("the fork is on node-a").isEqualTo(2);
                apiB.call("DELETE", "/v1/sandboxes/" + fork, null);
                assertThat(apiB.call("DELETE", "/v1/checkpoints/" + checkpoint, null).status()).isEqualTo(204);
                // A's live event stream carries what happens on B.
                try (var http = java.net.http.HttpClient.newHttpClient()) {
                    var lines = new java.util.concurrent.LinkedBlockingQueue<String>();
                    var stream = http.sendAsync(java.net.http.HttpRequest.newBuilder(java.net.URI.create(a.url + "/v1/events"))
                                    .header("Authorization", "Bearer " + key).header("Accept", "text/event-stream").build(),
                            java.net.http.HttpResponse.BodyHandlers.ofLines())
                            .thenAccept(response -> response.body().forEach(lines::add));
                    String paused = onB;
                    Await.until("a's stream to have replayed", Duration.ofSeconds(10), () -> lines.stream().anyMatch(l -> l.contains(paused)));
                    apiB.post("/v1/sandboxes/" + onB + "/pause", null);
                    Await.until("b's pause on a's live stream", Duration.ofSeconds(10), () ->
                            lines.stream().anyMatch(l -> l.contains(paused) && l.contains("\"to\":\"paused\"")));
                    stream.cancel(true);
                    apiB.post("/v1/sandboxes/" + onB + "/resume", null);
                }
                // A preview of A's sandbox, asked at B's preview listener (as a load balancer in front of the nodes would send it):
                // B checks its token and passes it on to A's listener, which serves it from the sandbox.
                exec(apiA, onA, "mkdir -p /www && echo served-by-a > /www/index.html");
                apiB.post("/v1/sandboxes/" + onA + "/processes", "{\"cmd\": [\"httpd\", \"-f\", \"-p\", \"8000\", \"-h\", \"/www\"]}");
                String served = onA;
                Await.until("httpd listening", Duration.ofSeconds(10), () -> exec(apiA, served, "netstat -ltn | grep -c ':8000 '").strip().equals("1"));
                var preview = apiB.post("/v1/sandboxes/" + onA + "/previews", "{\"port\": 8000}");
                String previewUrlOfB = apiB.get("/v1/nodes").get("items").get(1).get("previewUrl").asText();
                assertThat(previewUrlOfB).isNotEqualTo(apiB.get("/v1/nodes").get("items").get(0).get("previewUrl").asText());
                try (var http = java.net.http.HttpClient.newHttpClient()) {
                    var url = java.net.URI.create(previewUrlOfB + "/preview/" + onA + "/8000/");
                    var viaB = http.send(java.net.http.HttpRequest.newBuilder(url).header("X-Stasis-Preview-Token", preview.get("token").asText()).build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
                    assertThat(viaB.statusCode()).isEqualTo(200);
                    assertThat(viaB.body()).isEqualTo("served-by-a\n");
                    var wrongToken = http.send(java.net.http.HttpRequest.newBuilder(url).header("X-Stasis-Preview-Token", "wrong").build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
                    assertThat(wrongToken.statusCode()).isEqualTo(403);
                }
                // A terminal of A's sandbox opened through B: its frames are relayed both ways.
                assertThat(terminalThrough(b.url, key, onA, "sleep 0.3; echo relayed-$((40+2)); hostname\n", false))
                        .contains("relayed-42").contains(onA.replace("_", "-"));
                // As a browser opens it (the web console): the credential as a subprotocol, which the relay passes on.
                assertThat(terminalThrough(b.url, key, onA, "sleep 0.3; echo relayed-$((40+3))\n", true)).contains("relayed-43");
                // An MCP session at node C works on A's sandbox: its tools call C's API, which passes the calls on to A.
                var mcpAtC = HttpClientStreamableHttpTransport.builder(c.url).endpoint("/mcp")
                        .requestBuilder(java.net.http.HttpRequest.newBuilder().header("Authorization", "Bearer " + key)).build();
                try (var mcp = McpClient.sync(mcpAtC).requestTimeout(Duration.ofMinutes(1)).build()) {
                    mcp.initialize();
                    assertThat(mcpText(mcp, "sandbox_exec", Map.of("sandbox", onA, "command", "cat /root/f; hostname")))
                            .startsWith("exit code 0").contains("from-b\n" + onA.replace("_", "-"));
                    assertThat(mcpText(mcp, "file_read", Map.of("sandbox", onA, "path", "/root/put.txt"))).isEqualTo("written through b");
                    mcpText(mcp, "file_write", Map.of("sandbox", onA, "path", "/root/by-mcp", "content", "through c"));
                    assertThat(exec(apiA, onA, "cat /root/by-mcp")).isEqualTo("through c");
                }
                // A volume of node A through node B's S3 endpoint: B checks the signature and passes the call on to A
                // with the host the client signed; the object lands in A's volume.
                apiA.post("/v1/volumes", "{\"name\": \"shared-files\", \"sizeMb\": 32}");
                try (var s3 = S3Client.builder().endpointOverride(java.net.URI.create(b.url + "/s3")).forcePathStyle(true).region(Region.US_EAST_1)
                        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(key, key)))
                        .httpClientBuilder(Apache5HttpClient.builder()).build()) {
                    s3.putObject(r -> r.bucket("shared-files").key("dir/hello.txt"), RequestBody.fromString("through b"));
                    assertThat(s3.getObjectAsBytes(r -> r.bucket("shared-files").key("dir/hello.txt")).asUtf8String()).isEqualTo("through b");
                    assertThat(s3.listObjectsV2(r -> r.bucket("shared-files")).contents()).extracting(S3Object::key).containsExactly("dir/hello.txt");
                    s3.deleteObject(r -> r.bucket("shared-files").key("dir/hello.txt"));
                    assertThat(s3.listObjectsV2(r -> r.bucket("shared-files")).contents()).isEmpty();
                }
                assertThat(apiB.call("DELETE", "/v1/volumes/shared-files", null).status()).isEqualTo(204);
                // An unknown sandbox is the same 404 on every node.
                assertThat(apiB.call("GET", "/v1/sandboxes/sbx_0000000000000000", null).errorCode()).isEqualTo("sandbox_not_found");
                // Listings show every node's sandboxes; the third node answers for both others'.
                assertThat(names(apiA.get("/v1/sandboxes").get("items"))).containsExactlyInAnyOrder("on-a", "on-b");
                assertThat(exec(apiC, onA, "hostname")).isEqualTo(onA.replace("_", "-") + "\n");
                assertThat(exec(apiC, onB, "hostname")).isEqualTo(onB.replace("_", "-") + "\n");
                c.close();
                assertThat(apiA.get("/v1/nodes").get("items").get(0).get("sandboxes").asInt()).isEqualTo(1);
            }

            // B restarts: A's sandbox is not B's to reconcile, and B's own comes back.
            b.close();
            b = track(started, ServiceProcess.start(dataB, logB, Map.of(), flagsB));
            try (var apiA = new RawApi(a.url, key); var apiB = new RawApi(b.url, key)) {
                // Its node's own (its idle policy may have paused it meanwhile), not stopped by the other node's reconciler.
                assertThat(apiA.get("/v1/sandboxes/" + onA).get("state").asText()).isIn("running", "paused", "standby");
                assertThat(exec(apiA, onA, "cat /root/f; ps -o args | grep -c '^sleep 1000'")).isEqualTo("from-b\n1\n");
                assertThat(exec(apiB, onB, "echo b-is-back")).isEqualTo("b-is-back\n");

                // A is killed: once its lease lapses, its sandbox answers node_unavailable through B.
                a.kill();
                Await.until("node-a's lease to lapse", Duration.ofSeconds(45), () ->
                        !apiB.get("/v1/nodes").get("items").get(0).get("alive").asBoolean());
                var unavailable = apiB.call("POST", "/v1/sandboxes/" + onA + "/exec", "{\"cmd\": [\"true\"]}");
                assertThat(unavailable.status()).isEqualTo(503);
                assertThat(unavailable.errorCode()).isEqualTo("node_unavailable");
                assertThat(unavailable.body().path("error").path("message").asText()).contains("node-a");
                assertThat(exec(apiB, onB, "echo b-still-serves")).isEqualTo("b-still-serves\n");
            }

            // A is back: its sandbox, processes and files with it, answers through B again.
            a = track(started, ServiceProcess.start(dataA, logA, Map.of(), flagsA));
            try (var apiB = new RawApi(b.url, key)) {
                assertThat(exec(apiB, onA, "cat /root/f /root/put.txt; echo; ps -o args | grep -c '^sleep 1000'"))
                        .isEqualTo("from-b\nwritten through b\n1\n");
                apiB.call("DELETE", "/v1/sandboxes/" + onA, null);
                apiB.call("DELETE", "/v1/sandboxes/" + onB, null);
                assertThat(apiB.get("/v1/sandboxes").get("items")).isEmpty();
            }
            onA = null;
            onB = null;
            for (var service : started) service.close();
            started.clear();
            for (Path dir : new Path[] {dataA, dataB, dataC}) {
                assertThat(HostLeaks.mountsUnder(dir)).isEmpty();
                assertThat(HostLeaks.loopDevicesBackedBy(dir, Duration.ofSeconds(15))).isEmpty();
            }
        } finally {
            for (var service : started) service.close();
            if (Files.exists(dataC) && HostLeaks.mountsUnder(dataC).isEmpty()) ServiceFixture.deleteTree(dataC);
            if (onA != null) ServiceProcess.removeLeftovers(dataA, logA, onA, flagsA);
            if (onB != null) ServiceProcess.removeLeftovers(dataB, logB, onB, flagsB);
            for (String left : new String[] {onA, onB})
                if (left != null) assertThat(HostLeaks.processesOf(Set.of(new SandboxId(left)))).isEmpty();
            for (Path dir : new Path[] {dataA, dataB}) if (Files.exists(dir)) ServiceFixture.deleteTree(dir); // removeLeftovers removes its own
        }
    }

    /**
     * A node is killed for good (its service, and the host's copy of what it held, as a lost host
     * would lose them): its durably hibernated sandbox comes back on the other node, files, memory
     * and processes as they were hibernated; the lost node, when it returns, finds it no longer its
     * own and removes what it held of it.
     */
    @Test
    void aLostNodesDurablyHibernatedSandboxResumesOnAnotherNode() throws Exception {
        Path dataA = Files.createTempDirectory("stasis-nodes-it-a");
        Path dataB = Files.createTempDirectory("stasis-nodes-it-b");
        Path blobs = Files.createTempDirectory("stasis-nodes-it-blobs");
        Path logA = Path.of("target", "nodes-it-lost-a.log").toAbsolutePath();
        Path logB = Path.of("target", "nodes-it-lost-b.log").toAbsolutePath();
        String catalog = postgres.server().newDatabase();
        String[] shared = {"--catalog", catalog, "--blob-dir", blobs.toString(), "--hibernate-durable", "--node-lease", "3s"};
        String[] flagsA = concat(shared, "--node-name", "node-a");
        String[] flagsB = concat(shared, "--node-name", "node-b");
        var started = new ArrayList<ServiceProcess>();
        String sandbox = null;
        try {
            var a = track(started, ServiceProcess.start(dataA, logA, Map.of(), flagsA));
            String key = Files.readString(dataA.resolve("root.key")).strip();
            Files.copy(dataA.resolve("root.key"), dataB.resolve("root.key"));
            var b = track(started, ServiceProcess.start(dataB, logB, Map.of(), flagsB));
            long counted;
            try (var apiA = new RawApi(a.url, key)) {
                sandbox = apiA.post("/v1/sandboxes", "{\"name\": \"wanderer\"}").get("id").asText();
                exec(apiA, sandbox, "echo kept > /root/kept");
                apiA.post("/v1/sandboxes/" + sandbox + "/processes",
                        "{\"cmd\": [\"sh\", \"-c\", \"i=0; while true; do i=$((i+1)); echo $i > /root/count; sleep 0.1; done\"]}");
                String id = sandbox;
                Await.until("the counter to count", Duration.ofSeconds(10), () -> count(apiA, id) > 5);
                apiA.post("/v1/sandboxes/" + sandbox + "/hibernate", null);
                counted = count(apiA, sandbox); // resumes it: counting on
                apiA.post("/v1/sandboxes/" + sandbox + "/hibernate", null);
                Await.until("the durable copy of the hibernation", Duration.ofSeconds(30), () ->
                        apiA.get("/v1/sandboxes/" + id).hasNonNull("durableImage"));
            }
            a.kill();
            try (var apiB = new RawApi(b.url, key)) {
                String id = sandbox;
                Await.until("node-b to adopt the sandbox", Duration.ofSeconds(60), () ->
                        apiB.get("/v1/events?limit=1000").toString().contains("node.adopted"));
                assertThat(apiB.get("/v1/nodes").get("items").get(1).get("sandboxes").asInt()).isEqualTo(1);
                // The next call resumes it here, from the durable image.
                assertThat(exec(apiB, sandbox, "cat /root/kept")).isEqualTo("kept\n");
                long first = count(apiB, sandbox);
                assertThat(first).as("the counter goes on from where it was hibernated").isGreaterThanOrEqualTo(counted);
                Await.until("the counter to go on", Duration.ofSeconds(10), () -> count(apiB, id) > first);
                assertThat(apiB.get("/v1/sandboxes/" + sandbox).get("state").asText()).isEqualTo("running");
            }
            // node-a returns: the sandbox is not its own any more; what it held of it goes.
            a = track(started, ServiceProcess.start(dataA, logA, Map.of(), flagsA));
            assertThat(HostLeaks.processesOf(Set.of(new SandboxId(sandbox)))).as("one copy runs, on node-b").isNotEmpty();
            try (var apiA = new RawApi(a.url, key)) {
                assertThat(exec(apiA, sandbox, "cat /root/kept")).isEqualTo("kept\n"); // through node-a, served by node-b
                apiA.call("DELETE", "/v1/sandboxes/" + sandbox, null);
            }
            sandbox = null;
            for (var service : started) service.close();
            started.clear();
            for (Path dir : new Path[] {dataA, dataB}) {
                assertThat(HostLeaks.mountsUnder(dir)).isEmpty();
                assertThat(HostLeaks.loopDevicesBackedBy(dir, Duration.ofSeconds(15))).isEmpty();
            }
        } finally {
            for (var service : started) service.close();
            if (sandbox != null) {
                ServiceProcess.removeLeftovers(dataB, logB, sandbox, flagsB);
                if (Files.exists(dataA)) ServiceProcess.removeLeftovers(dataA, logA, null, flagsA);
                assertThat(HostLeaks.processesOf(Set.of(new SandboxId(sandbox)))).isEmpty();
            }
            for (Path dir : new Path[] {dataA, dataB, blobs}) if (Files.exists(dir)) ServiceFixture.deleteTree(dir);
        }
    }

    /**
     * No split brain: node-a is cut off from PostgreSQL, not killed. Once its lease lapses by its own
     * clock it answers nothing (503 {@code node_unavailable}) and changes nothing; node-b adopts its
     * durably hibernated sandbox, which resumes there, counter and files included. When node-a reaches
     * the catalog again, the sandbox is node-b's: node-a passes its requests on, and one copy of its
     * processes runs on the host, node-b's; node-a's running sandbox, never adopted, is as it was.
     */
    @Test
    void aNodeCutOffFromTheCatalogStopsAndItsSandboxRunsOnlyWhereItWasAdopted() throws Exception {
        Path dataA = Files.createTempDirectory("stasis-nodes-it-a");
        Path dataB = Files.createTempDirectory("stasis-nodes-it-b");
        Path blobs = Files.createTempDirectory("stasis-nodes-it-blobs");
        Path logA = Path.of("target", "nodes-it-split-a.log").toAbsolutePath();
        Path logB = Path.of("target", "nodes-it-split-b.log").toAbsolutePath();
        String catalog = postgres.server().newDatabase();
        String[] shared = {"--blob-dir", blobs.toString(), "--hibernate-durable", "--node-lease", "3s"};
        var started = new ArrayList<ServiceProcess>();
        var sandboxes = new ArrayList<String>();
        var relay = CuttableRelay.to(postgres.server().port());
        String throughRelay = catalog.replace(":" + postgres.server().port() + "/", ":" + relay.port() + "/");
        String[] flagsA = concat(concat(shared, "--catalog", throughRelay), "--node-name", "node-a");
        // node-b has room for the adopted sandbox, and less than node-a: both creates are made on node-a.
        String[] flagsB = concat(concat(shared, "--catalog", catalog), "--node-name", "node-b", "--node-max-memory-mb", "1536");
        try {
            var a = track(started, ServiceProcess.start(dataA, logA, Map.of(), flagsA));
            String key = Files.readString(dataA.resolve("root.key")).strip();
            Files.copy(dataA.resolve("root.key"), dataB.resolve("root.key"));
            var b = track(started, ServiceProcess.start(dataB, logB, Map.of(), flagsB));
            try (var apiA = new RawApi(a.url, key); var apiB = new RawApi(b.url, key)) {
                String moved = apiA.post("/v1/sandboxes", "{\"name\": \"moved\"}").get("id").asText();
                sandboxes.add(moved);
                String stays = apiA.post("/v1/sandboxes", "{\"name\": \"stays\"}").get("id").asText();
                sandboxes.add(stays);
                assertThat(apiA.get("/v1/nodes").get("items").get(0).get("sandboxes").asInt()).as("both on node-a").isEqualTo(2);
                exec(apiA, moved, "echo kept > /root/kept");
                apiA.post("/v1/sandboxes/" + moved + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"" + COUNTER + "\"]}");
                Await.until("the counter to count", Duration.ofSeconds(10), () -> count(apiA, moved) > 5);
                apiA.post("/v1/sandboxes/" + moved + "/hibernate", null);
                Await.until("the durable copy of the hibernation", Duration.ofSeconds(30), () ->
                        apiA.get("/v1/sandboxes/" + moved).hasNonNull("durableImage"));
                exec(apiA, stays, "echo untouched > /root/mark");

                relay.cut();
                // A request that reached node-a just before the cut waits for the catalog (up to its pool's timeouts).
                Await.until("node-a to stop answering", Duration.ofSeconds(60), () -> {
                    var answer = apiA.call("GET", "/v1/sandboxes/" + stays, null);
                    return answer.status() == 503 && "node_unavailable".equals(answer.errorCode())
                            && answer.body().path("error").path("message").asText().contains("could not renew its lease");
                });
                Await.until("node-b to adopt the cut-off node's sandbox", Duration.ofSeconds(60), () ->
                        apiB.get("/v1/events?limit=1000").toString().contains("node.adopted"));
                assertThat(exec(apiB, moved, "cat /root/kept")).isEqualTo("kept\n");
                long first = count(apiB, moved);
                Await.until("the counter to go on at node-b", Duration.ofSeconds(10), () -> count(apiB, moved) > first);
                assertThat(apiB.call("POST", "/v1/sandboxes/" + stays + "/exec", "{\"cmd\": [\"true\"]}").errorCode())
                        .as("node-a's own sandbox waits for it").isEqualTo("node_unavailable");
                // Without a durable copy, it shows lost, with why, in its record and in listings.
                Await.until("node-a's running sandbox to show lost", Duration.ofSeconds(30), () ->
                        apiB.get("/v1/sandboxes/" + stays).get("state").asText().equals("lost"));
                assertThat(apiB.get("/v1/sandboxes/" + stays).get("stateReason").asText()).contains("node node-a has not renewed its lease");
                assertThat(apiB.get("/v1/sandboxes").get("items").toString()).contains("\"state\":\"lost\"");
                assertThat(countersOf(moved)).as("one copy runs").isEqualTo(1);

                relay.mend();
                Await.until("node-a to answer again", Duration.ofSeconds(30), () -> apiA.call("GET", "/v1/nodes", null).status() == 200);
                assertThat(apiA.get("/v1/nodes").get("items").get(1).get("sandboxes").asInt()).as("moved is node-b's").isEqualTo(1);
                assertThat(exec(apiA, moved, "cat /root/kept")).as("through node-a, served by node-b").isEqualTo("kept\n");
                assertThat(countersOf(moved)).as("still one copy, node-b's").isEqualTo(1);
                // As it was (the idle policy may have paused it meanwhile, on node-a's own clock).
                assertThat(apiA.get("/v1/sandboxes/" + stays).get("state").asText()).isIn("running", "paused", "standby");
                assertThat(apiB.get("/v1/sandboxes/" + stays).get("state").asText()).as("its node is back").isIn("running", "paused", "standby");
                assertThat(exec(apiA, stays, "cat /root/mark")).isEqualTo("untouched\n");
                for (String id : sandboxes) assertThat(apiA.call("DELETE", "/v1/sandboxes/" + id, null).status()).isEqualTo(204);
                sandboxes.clear();
            }
            for (var service : started) service.close();
            started.clear();
            for (Path dir : new Path[] {dataA, dataB}) {
                assertThat(HostLeaks.mountsUnder(dir)).isEmpty();
                assertThat(HostLeaks.loopDevicesBackedBy(dir, Duration.ofSeconds(15))).isEmpty();
            }
        } finally {
            relay.mend();
            for (var service : started) service.close();
            started.clear();
            if (!sandboxes.isEmpty()) { // a failure left them: both nodes back, to delete them wherever they are
                var a = track(started, ServiceProcess.start(dataA, logA, Map.of(), flagsA));
                track(started, ServiceProcess.start(dataB, logB, Map.of(), flagsB));
                try (var api = new RawApi(a.url, Files.readString(dataA.resolve("root.key")).strip())) {
                    for (String left : sandboxes) api.call("DELETE", "/v1/sandboxes/" + left, null);
                }
                for (var service : started) service.close();
            }
            relay.close();
            for (Path dir : new Path[] {dataA, dataB, blobs}) if (Files.exists(dir)) ServiceFixture.deleteTree(dir);
        }
    }

    /**
     * Creates are placed by room: node-b may hold two running sandboxes. Creates through both nodes
     * at once, in a tenant allowed four, admit exactly four, and node-b never holds more than two; a
     * create through a full node-b is made on node-a, and one node-b must make itself is refused with
     * 503 {@code host_busy} naming the limit.
     */
    @Test
    void createsGoWhereThereIsRoomAndConcurrentCreatesOnTwoNodesNeverOvershoot() throws Exception {
        Path dataA = Files.createTempDirectory("stasis-nodes-it-a");
        Path dataB = Files.createTempDirectory("stasis-nodes-it-b");
        Path logA = Path.of("target", "nodes-it-place-a.log").toAbsolutePath();
        Path logB = Path.of("target", "nodes-it-place-b.log").toAbsolutePath();
        String catalog = postgres.server().newDatabase();
        var started = new ArrayList<ServiceProcess>();
        var created = new java.util.concurrent.ConcurrentLinkedQueue<String>();
        String secret = null;
        try {
            var a = track(started, ServiceProcess.start(dataA, logA, Map.of(), "--catalog", catalog, "--node-name", "node-a"));
            String key = Files.readString(dataA.resolve("root.key")).strip();
            Files.copy(dataA.resolve("root.key"), dataB.resolve("root.key"));
            var b = track(started, ServiceProcess.start(dataB, logB, Map.of(), "--catalog", catalog, "--node-name", "node-b",
                    "--node-max-sandboxes", "2"));
            try (var rootA = new RawApi(a.url, key); var rootB = new RawApi(b.url, key)) {
                assertThat(rootA.get("/v1/nodes").get("items").get(1).get("capacity").get("maxRunningSandboxes").asInt()).isEqualTo(2);
                var tenant = rootA.post("/v1/tenants", "{\"name\": \"capped\", \"quota\": {\"runningSandboxes\": 4}}");
                secret = rootA.post("/v1/tenants/" + tenant.get("id").asText() + "/keys", "{}").get("secret").asText();
                var statuses = new java.util.concurrent.ConcurrentLinkedQueue<String>();
                try (var tenantA = new RawApi(a.url, secret); var tenantB = new RawApi(b.url, secret);
                     var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
                    var creates = new ArrayList<java.util.concurrent.Future<?>>();
                    for (int i = 0; i < 10; i++) {
                        var api = i % 2 == 0 ? tenantA : tenantB;
                        creates.add(pool.submit(() -> {
                            var answer = api.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\"}");
                            if (answer.status() == 201) created.add(answer.body().get("id").asText());
                            statuses.add(answer.status() + " " + (answer.status() == 201 ? "created" : answer.errorCode()));
                        }));
                    }
                    for (var create : creates) create.get();
                }
                // A create node-a placed on node-b as another took node-b's last room is refused there and placed again:
                // no create fails for a node's room while another has some. (Near the quota, a create may be refused while
                // another's result and its hold both count for an instant: never admitted past it.)
                assertThat(statuses).as("%s", statuses).filteredOn(s -> s.equals("201 created")).hasSizeBetween(1, 4);
                assertThat(statuses).as("%s", statuses).filteredOn(s -> !s.equals("201 created")).allMatch(s -> s.equals("429 quota_exceeded"));
                var nodes = rootA.get("/v1/nodes").get("items");
                assertThat(nodes.get(1).get("sandboxes").asInt()).as("node-b's limit: %s", nodes).isLessThanOrEqualTo(2);
                assertThat(nodes.get(0).get("sandboxes").asInt() + nodes.get(1).get("sandboxes").asInt()).isEqualTo(created.size());
                // The quota is exact: creates one by one fill it to four, and the fifth is refused.
                try (var tenantB = new RawApi(b.url, secret)) {
                    while (created.size() < 4) created.add(tenantB.post("/v1/sandboxes", "{\"template\": \"tiny\"}").get("id").asText());
                    assertThat(tenantB.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\"}").errorCode()).isEqualTo("quota_exceeded");
                }
                nodes = rootA.get("/v1/nodes").get("items");
                assertThat(nodes.get(1).get("sandboxes").asInt()).as("node-b's limit: %s", nodes).isLessThanOrEqualTo(2);

                // node-b filled up to its limit; a create through it is then made on node-a.
                for (int i = 0; i < 8 && rootA.get("/v1/nodes").get("items").get(1).get("sandboxes").asInt() < 2; i++)
                    created.add(rootB.post("/v1/sandboxes", "{\"template\": \"tiny\"}").get("id").asText());
                int onA = rootA.get("/v1/nodes").get("items").get(0).get("sandboxes").asInt();
                assertThat(rootA.get("/v1/nodes").get("items").get(1).get("sandboxes").asInt()).isEqualTo(2);
                created.add(rootB.post("/v1/sandboxes", "{\"template\": \"tiny\"}").get("id").asText());
                assertThat(rootA.get("/v1/nodes").get("items").get(0).get("sandboxes").asInt()).as("made on node-a").isEqualTo(onA + 1);
                // A create node-b must make itself (passed on to it by another node) is refused.
                try (var http = java.net.http.HttpClient.newHttpClient()) {
                    var refused = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(b.url + "/v1/sandboxes"))
                            .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
                            .header("Stasis-Forwarded-By", "node-a").POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}")).build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
                    assertThat(refused.statusCode()).isEqualTo(503);
                    var error = JSON.readTree(refused.body()).get("error");
                    assertThat(error.get("code").asText()).isEqualTo("host_busy");
                    assertThat(error.get("details").get("limit").asText()).isEqualTo("runningSandboxes");
                    assertThat(error.get("message").asText()).contains("node node-b is full");
                }
                try (var tenantA = new RawApi(a.url, secret)) { // the tenant's sandboxes are its own: its key deletes them, root's finds none
                    for (String id = created.poll(); id != null; id = created.poll()) {
                        int status = tenantA.call("DELETE", "/v1/sandboxes/" + id, null).status();
                        if (status == 404) status = rootA.call("DELETE", "/v1/sandboxes/" + id, null).status();
                        assertThat(status).isEqualTo(204);
                    }
                }
                assertThat(rootA.get("/v1/nodes").get("items").get(0).get("sandboxes").asInt()).isZero();
                assertThat(rootA.get("/v1/nodes").get("items").get(1).get("sandboxes").asInt()).isZero();
            }
            for (var service : started) service.close();
            started.clear();
            for (Path dir : new Path[] {dataA, dataB}) {
                assertThat(HostLeaks.mountsUnder(dir)).isEmpty();
                assertThat(HostLeaks.loopDevicesBackedBy(dir, Duration.ofSeconds(15))).isEmpty();
            }
        } finally {
            if (!started.isEmpty()) { // a failure: what it created goes before the services stop
                try (var root = new RawApi(started.getFirst().url, Files.readString(dataA.resolve("root.key")).strip());
                     var tenant = new RawApi(started.getFirst().url, secret == null ? "none" : secret)) {
                    for (String id : created) {
                        root.call("DELETE", "/v1/sandboxes/" + id, null);
                        tenant.call("DELETE", "/v1/sandboxes/" + id, null);
                    }
                }
            }
            for (var service : started) service.close();
            for (Path dir : new Path[] {dataA, dataB}) if (Files.exists(dir) && HostLeaks.mountsUnder(dir).isEmpty()) ServiceFixture.deleteTree(dir);
        }
    }

    /** The counter's last value, read again while the loop is rewriting the file (it is empty for that instant). */
    private static long count(RawApi api, String sandbox) {
        String text = exec(api, sandbox, "for i in 1 2 3 4 5 6 7 8 9 10; do c=$(cat /root/count); [ -n \"$c\" ] && break; sleep 0.02; done; echo $c").strip();
        return text.isEmpty() ? -1 : Long.parseLong(text);
    }

    private static final String COUNTER = "i=0; while true; do i=$((i+1)); echo $i > /root/count; sleep 0.1; done";

    /**
     * How many copies of the counter loop run on the host in the sandbox's cgroup: two would be one
     * sandbox on two nodes. The loop's shell forks for each {@code sleep}, and until that child
     * execs it carries the loop's command line: a copy counts only if its parent is not one too.
     */
    private static long countersOf(String sandbox) throws java.io.IOException {
        var loops = new java.util.HashMap<String, String>(); // pid -> parent pid
        try (var procs = Files.list(Path.of("/proc"))) {
            procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                try {
                    String cmdline = Files.readString(p.resolve("cmdline")).replace('\0', ' ');
                    if (!cmdline.contains("while true; do i=") || !Files.readString(p.resolve("cgroup")).contains("/" + sandbox)) return;
                    String stat = Files.readString(p.resolve("stat")); // pid (comm) state ppid ...
                    loops.put(p.getFileName().toString(), stat.substring(stat.lastIndexOf(')') + 2).split(" ")[1]);
                } catch (java.io.IOException e) {
                    // ended meanwhile
                }
            });
        }
        return loops.values().stream().filter(parent -> !loops.containsKey(parent)).count();
    }

    /**
     * A running sandbox with {@code durability.checkpointEvery} on a lost host (its node SIGKILLed,
     * and its processes with it): it keeps one durability checkpoint, the newest, in the durable
     * store; another node adopts the sandbox from it and resumes it, files, memory and processes as
     * of that checkpoint, and it goes on counting there.
     */
    @Test
    void aLostNodesRunningSandboxResumesElsewhereFromItsNewestDurabilityCheckpoint() throws Exception {
        Path dataA = Files.createTempDirectory("stasis-nodes-it-a");
        Path dataB = Files.createTempDirectory("stasis-nodes-it-b");
        Path blobs = Files.createTempDirectory("stasis-nodes-it-blobs");
        Path logA = Path.of("target", "nodes-it-durability-a.log").toAbsolutePath();
        Path logB = Path.of("target", "nodes-it-durability-b.log").toAbsolutePath();
        String catalog = postgres.server().newDatabase();
        // No warm pool: on a lost host its sandboxes would die too, and here they would hold the lost disk's pool.
        String[] shared = {"--catalog", catalog, "--blob-dir", blobs.toString(), "--node-lease", "3s", "--warm-pool", "0"};
        String[] flagsA = concat(shared, "--node-name", "node-a");
        String[] flagsB = concat(shared, "--node-name", "node-b");
        var started = new ArrayList<ServiceProcess>();
        String sandbox = null;
        try {
            var a = track(started, ServiceProcess.start(dataA, logA, Map.of(), flagsA));
            String key = Files.readString(dataA.resolve("root.key")).strip();
            Files.copy(dataA.resolve("root.key"), dataB.resolve("root.key"));
            var b = track(started, ServiceProcess.start(dataB, logB, Map.of(), flagsB));
            try (var apiA = new RawApi(a.url, key)) {
                var created = apiA.post("/v1/sandboxes", "{\"name\": \"kept-running\", \"durability\": {\"checkpointEvery\": \"5s\"},"
                        + " \"lifecycle\": {\"pauseAfterIdle\": null}}");
                sandbox = created.get("id").asText();
                assertThat(created.get("durability").get("checkpointEvery").asText()).isEqualTo("5s");
                String id = sandbox;
                exec(apiA, id, "echo kept > /root/kept");
                apiA.post("/v1/sandboxes/" + id + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"" + COUNTER + "\"]}");
                Await.until("a durable durability checkpoint", Duration.ofSeconds(30), () ->
                        apiA.get("/v1/sandboxes/" + id).hasNonNull("durableImage"));
                String first = apiA.get("/v1/sandboxes/" + id).get("durableImage").get("checkpointId").asText();
                Await.until("the next one, replacing it", Duration.ofSeconds(30), () ->
                        !apiA.get("/v1/sandboxes/" + id).get("durableImage").get("checkpointId").asText().equals(first));
                var durability = new ArrayList<String>();
                for (var c : apiA.get("/v1/sandboxes/" + id + "/checkpoints").get("items"))
                    if (c.get("purpose").asText().equals("durability")) durability.add(c.get("id").asText());
                assertThat(durability).as("the newest is kept").hasSize(1).doesNotContain(first);
                assertThat(count(apiA, id)).isPositive();
            }
            // node-a's host is lost: the service and the sandbox's processes are killed, and its disk is gone.
            a.kill();
            killProcessesOf(sandbox);
            loseDisk(dataA, key);
            try (var apiB = new RawApi(b.url, key)) {
                String id = sandbox;
                Await.until("node-b to adopt the running sandbox", Duration.ofSeconds(60), () ->
                        apiB.get("/v1/events?limit=1000").toString().contains("node.adopted"));
                assertThat(exec(apiB, id, "cat /root/kept")).isEqualTo("kept\n");
                long resumed = count(apiB, id);
                assertThat(resumed).as("the counter as of the checkpoint").isPositive();
                Await.until("the counter to go on at node-b", Duration.ofSeconds(10), () -> count(apiB, id) > resumed);
                assertThat(apiB.get("/v1/sandboxes/" + id).get("state").asText()).isEqualTo("running");
                assertThat(countersOf(id)).as("one copy runs, node-b's").isEqualTo(1);
            }
            // node-a returns on a new disk (its root key given back): the sandbox is node-b's, and answers through node-a.
            a = track(started, ServiceProcess.start(dataA, logA, Map.of(), flagsA));
            try (var apiA = new RawApi(a.url, key)) {
                assertThat(exec(apiA, sandbox, "cat /root/kept")).isEqualTo("kept\n"); // through node-a, served by node-b
                assertThat(countersOf(sandbox)).isEqualTo(1);
                assertThat(apiA.call("DELETE", "/v1/sandboxes/" + sandbox, null).status()).isEqualTo(204);
            }
            sandbox = null;
            for (var service : started) service.close();
            started.clear();
            for (Path dir : new Path[] {dataA, dataB}) {
                assertThat(HostLeaks.mountsUnder(dir)).isEmpty();
                assertThat(HostLeaks.loopDevicesBackedBy(dir, Duration.ofSeconds(15))).isEmpty();
            }
        } finally {
            for (var service : started) service.close();
            if (sandbox != null) { // a failure: kill what it left, then let each node clean up after it (the failure stays the one reported)
                try {
                    killProcessesOf(sandbox);
                    ServiceProcess.removeLeftovers(dataB, logB, sandbox, flagsB);
                    if (Files.exists(dataA)) ServiceProcess.removeLeftovers(dataA, logA, null, flagsA);
                } catch (Throwable cleanup) {
                    cleanup.printStackTrace();
                }
            }
            for (Path dir : new Path[] {dataA, dataB, blobs}) if (Files.exists(dir) && HostLeaks.mountsUnder(dir).isEmpty()) ServiceFixture.deleteTree(dir);
        }
    }

    /**
     * A node cut off from the catalog freezes its running sandbox that keeps durability checkpoints
     * as soon as its lease lapses by its own clock (before the other node, which waits a lease more
     * and here a long grace, could adopt it), and thaws it when it reaches the catalog again and
     * the sandbox is still its own: it goes on counting.
     */
    @Test
    void aNodeCutOffFreezesItsDurableRunningSandboxAndThawsItWhenBack() throws Exception {
        Path dataA = Files.createTempDirectory("stasis-nodes-it-a");
        Path dataB = Files.createTempDirectory("stasis-nodes-it-b");
        Path blobs = Files.createTempDirectory("stasis-nodes-it-blobs");
        Path logA = Path.of("target", "nodes-it-freeze-a.log").toAbsolutePath();
        Path logB = Path.of("target", "nodes-it-freeze-b.log").toAbsolutePath();
        String catalog = postgres.server().newDatabase();
        var started = new ArrayList<ServiceProcess>();
        String sandbox = null;
        var relay = CuttableRelay.to(postgres.server().port());
        String throughRelay = catalog.replace(":" + postgres.server().port() + "/", ":" + relay.port() + "/");
        String[] flagsA = {"--catalog", throughRelay, "--blob-dir", blobs.toString(), "--node-lease", "3s", "--node-name", "node-a"};
        // node-b waits its own (long) lease after node-a's lapsed before it would adopt: the test mends the cut well before.
        String[] flagsB = {"--catalog", catalog, "--blob-dir", blobs.toString(), "--node-lease", "60s", "--node-name", "node-b"};
        try {
            var a = track(started, ServiceProcess.start(dataA, logA, Map.of(), flagsA));
            String key = Files.readString(dataA.resolve("root.key")).strip();
            Files.copy(dataA.resolve("root.key"), dataB.resolve("root.key"));
            var b = track(started, ServiceProcess.start(dataB, logB, Map.of(), flagsB));
            try (var apiA = new RawApi(a.url, key); var apiB = new RawApi(b.url, key)) {
                sandbox = apiA.post("/v1/sandboxes", "{\"durability\": {\"checkpointEvery\": \"5s\"}, \"lifecycle\": {\"pauseAfterIdle\": null}}")
                        .get("id").asText();
                String id = sandbox;
                apiA.post("/v1/sandboxes/" + id + "/processes", "{\"cmd\": [\"sh\", \"-c\", \"" + COUNTER + "\"]}");
                Await.until("a durable durability checkpoint", Duration.ofSeconds(30), () ->
                        apiA.get("/v1/sandboxes/" + id).hasNonNull("durableImage"));
                Thread.sleep(2_000); // the keeper's next pass counts it among those it keeps durable
                Path freezer = Path.of("/sys/fs/cgroup/freezer/stasis", id, "freezer.state");
                assertThat(Files.readString(freezer).strip()).isEqualTo("THAWED");

                relay.cut();
                Await.until("node-a to freeze the sandbox", Duration.ofSeconds(30), () -> stateOf(freezer).equals("FROZEN"));
                Thread.sleep(1_000);
                assertThat(Files.readString(freezer).strip()).isEqualTo("FROZEN");
                assertThat(apiB.get("/v1/events?limit=1000").toString()).as("not adopted").doesNotContain("node.adopted");

                relay.mend();
                Await.until("node-a to thaw it, back in reach", Duration.ofSeconds(60), () -> stateOf(freezer).equals("THAWED"));
                Await.until("node-a to answer again", Duration.ofSeconds(30), () -> apiA.call("GET", "/v1/nodes", null).status() == 200);
                long now = count(apiA, id);
                Await.until("the counter to go on", Duration.ofSeconds(10), () -> count(apiA, id) > now);
                assertThat(apiA.get("/v1/sandboxes/" + id).get("state").asText()).isEqualTo("running");
                assertThat(apiA.call("DELETE", "/v1/sandboxes/" + id, null).status()).isEqualTo(204);
            }
            sandbox = null;
            for (var service : started) service.close();
            started.clear();
            for (Path dir : new Path[] {dataA, dataB}) {
                assertThat(HostLeaks.mountsUnder(dir)).isEmpty();
                assertThat(HostLeaks.loopDevicesBackedBy(dir, Duration.ofSeconds(15))).isEmpty();
            }
        } finally {
            relay.mend();
            if (sandbox != null && !started.isEmpty()) {
                try (var api = new RawApi(started.getFirst().url, Files.readString(dataA.resolve("root.key")).strip())) {
                    api.call("DELETE", "/v1/sandboxes/" + sandbox, null);
                }
            }
            for (var service : started) service.close();
            relay.close();
            for (Path dir : new Path[] {dataA, dataB, blobs}) if (Files.exists(dir) && HostLeaks.mountsUnder(dir).isEmpty()) ServiceFixture.deleteTree(dir);
        }
    }

    private static String stateOf(Path freezer) {
        try {
            return Files.readString(freezer).strip();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * The loss of a dead node's disk: its swap file switched off, its pool unmounted (the loop device goes with it), its data
     * directory deleted, and an empty one in its place holding only the root key, as a new disk
     * would once its operator gave the key back.
     */
    private static void loseDisk(Path dataDir, String rootKey) throws Exception {
        for (String swap : HostLeaks.swapFilesUnder(dataDir)) { // the standby swap file the service had switched on
            var swapoff = new ProcessBuilder("swapoff", swap).inheritIO().start();
            assertThat(swapoff.waitFor()).as("swapoff %s", swap).isZero();
        }
        var mounts = new ArrayList<>(HostLeaks.mountsUnder(dataDir));
        mounts.sort(java.util.Comparator.reverseOrder()); // deepest first
        for (String mount : mounts) {
            var umount = new ProcessBuilder("umount", "-l", mount).inheritIO().start();
            assertThat(umount.waitFor()).as("umount %s", mount).isZero();
        }
        assertThat(HostLeaks.loopDevicesBackedBy(dataDir, Duration.ofSeconds(15))).isEmpty();
        ServiceFixture.deleteTree(dataDir);
        Files.createDirectories(dataDir);
        Files.writeString(dataDir.resolve("root.key"), rootKey + "\n");
    }

    /** Kills what runs in the sandbox's cgroup, as the loss of its host would: processes this test started. */
    private static void killProcessesOf(String sandbox) throws Exception {
        // A node killed in the middle of a checkpoint leaves its sandbox frozen, and a frozen process dies only once thawed.
        Path freezer = Path.of("/sys/fs/cgroup/freezer/stasis", sandbox, "freezer.state");
        if (Files.exists(freezer)) Files.writeString(freezer, "THAWED");
        var id = Set.of(new SandboxId(sandbox));
        for (int round = 0; round < 50 && !HostLeaks.processesOf(id).isEmpty(); round++) {
            for (String process : HostLeaks.processesOf(id)) // kill(1): ProcessHandle signals only processes it can vouch for
                new ProcessBuilder("kill", "-KILL", process.substring(0, process.indexOf(' '))).start().waitFor();
            Thread.sleep(100);
        }
        assertThat(HostLeaks.processesOf(id)).isEmpty();
    }

    /**
     * A node drained through another: its running sandbox is hibernated, made durable and taken by
     * the other node, where it goes on counting at its next call; creates sent to the drained node
     * land on the other one until the drain ends.
     */
    @Test
    void aDrainedNodesSandboxMovesAndItsCreatesGoElsewhereUntilTheDrainEnds() throws Exception {
        Path dataA = Files.createTempDirectory("stasis-nodes-it-a");
        Path dataB = Files.createTempDirectory("stasis-nodes-it-b");
        Path blobs = Files.createTempDirectory("stasis-nodes-it-blobs");
        Path logA = Path.of("target", "nodes-it-drain-a.log").toAbsolutePath();
        Path logB = Path.of("target", "nodes-it-drain-b.log").toAbsolutePath();
        String[] shared = {"--catalog", postgres.server().newDatabase(), "--blob-dir", blobs.toString(), "--node-lease", "3s"};
        String[] flagsA = concat(shared, "--node-name", "node-a");
        String[] flagsB = concat(shared, "--node-name", "node-b");
        var started = new ArrayList<ServiceProcess>();
        var sandboxes = new ArrayList<String>();
        try {
            var a = track(started, ServiceProcess.start(dataA, logA, Map.of(), flagsA));
            String key = Files.readString(dataA.resolve("root.key")).strip();
            Files.copy(dataA.resolve("root.key"), dataB.resolve("root.key"));
            var b = track(started, ServiceProcess.start(dataB, logB, Map.of(), flagsB));
            try (var apiA = new RawApi(a.url, key); var apiB = new RawApi(b.url, key)) {
                String moving = apiA.post("/v1/sandboxes", "{\"name\": \"moving\"}").get("id").asText();
                sandboxes.add(moving);
                apiA.post("/v1/sandboxes/" + moving + "/processes",
                        "{\"cmd\": [\"sh\", \"-c\", \"i=0; while true; do i=$((i+1)); echo $i > /root/count; sleep 0.1; done\"]}");
                Await.until("the counter to count", Duration.ofSeconds(10), () -> count(apiA, moving) > 5);

                var report = apiB.post("/v1/nodes/node-a/drain", null);
                assertThat(report.get("node").asText()).isEqualTo("node-a");
                assertThat(report.get("handedOver").toString()).contains(moving);
                assertThat(report.get("left")).isEmpty();
                // Until node-b has taken it, the sandbox answers node_unavailable, then it resumes there.
                Await.until("node-b to take the sandbox", Duration.ofSeconds(30), () -> {
                    var answer = apiA.call("GET", "/v1/sandboxes/" + moving, null);
                    if (answer.status() == 503) assertThat(answer.errorCode()).isEqualTo("node_unavailable");
                    return answer.status() == 200;
                });
                long hibernatedAt = count(apiA, moving);
                assertThat(apiA.get("/v1/nodes").get("items").get(1).get("sandboxes").asInt()).as("on node-b").isEqualTo(1);
                Await.until("the counter to go on at node-b", Duration.ofSeconds(10), () ->
                        count(apiA, moving) > hibernatedAt);
                assertThat(apiB.get("/v1/nodes").get("items").get(0).get("draining").asBoolean()).isTrue();

                // A create sent to the draining node lands on the other one.
                String created = apiA.post("/v1/sandboxes", "{}").get("id").asText();
                sandboxes.add(created);
                var nodesNow = apiA.get("/v1/nodes").get("items");
                assertThat(nodesNow.get(0).get("sandboxes").asInt()).as("node-a places none: %s", nodesNow).isZero();
                assertThat(apiA.call("DELETE", "/v1/nodes/node-a/drain", null).status()).isEqualTo(204);
                String after = apiA.post("/v1/sandboxes", "{}").get("id").asText();
                sandboxes.add(after);
                assertThat(apiA.get("/v1/nodes").get("items").get(0).get("sandboxes").asInt()).as("node-a places again").isEqualTo(1);
                assertThat(apiA.call("POST", "/v1/nodes/node-x/drain", null).errorCode()).isEqualTo("not_found");
                for (String id : sandboxes) apiA.call("DELETE", "/v1/sandboxes/" + id, null);
                sandboxes.clear();
            }
            for (var service : started) service.close();
            started.clear();
            for (Path dir : new Path[] {dataA, dataB}) {
                assertThat(HostLeaks.mountsUnder(dir)).isEmpty();
                assertThat(HostLeaks.loopDevicesBackedBy(dir, Duration.ofSeconds(15))).isEmpty();
            }
        } catch (Throwable failure) {
            // What a failed test left: one more start of each node deletes its sandboxes; the cause stays the failure.
            for (var service : started) service.close();
            started.clear();
            try (var a = ServiceProcess.start(dataA, logA, Map.of(), flagsA);
                 var b = ServiceProcess.start(dataB, logB, Map.of(), flagsB);
                 var api = new RawApi(a.url, Files.readString(dataA.resolve("root.key")).strip())) {
                for (String id : sandboxes) api.call("DELETE", "/v1/sandboxes/" + id, null);
            } catch (Throwable cleanup) {
                failure.addSuppressed(cleanup);
            }
            throw failure;
        } finally {
            for (var service : started) service.close();
            for (Path dir : new Path[] {dataA, dataB, blobs}) if (Files.exists(dir) && HostLeaks.mountsUnder(dir).isEmpty()) ServiceFixture.deleteTree(dir);
        }
    }

    private static String[] concat(String[] first, String... more) {
        var all = new ArrayList<>(java.util.Arrays.asList(first));
        all.addAll(java.util.Arrays.asList(more));
        return all.toArray(String[]::new);
    }

    private static ServiceProcess track(java.util.List<ServiceProcess> started, ServiceProcess service) {
        started.add(service);
        return service;
    }

    /**
     * Opens {@code cmd=sh} on the sandbox's terminal through {@code url}, types {@code input}, ends it and returns what came back;
     * {@code asBrowser}: the key offered as a subprotocol, as a browser must, instead of the Authorization header.
     */
    private static String terminalThrough(String url, String key, String sandbox, String input, boolean asBrowser) throws Exception {
        var received = new StringBuffer();
        var exit = new java.util.concurrent.CompletableFuture<String>();
        try (var http = java.net.http.HttpClient.newHttpClient()) {
            var builder = http.newWebSocketBuilder();
            if (asBrowser) builder.subprotocols("stasis", "bearer." + key);
            else builder.header("Authorization", "Bearer " + key);
            var socket = builder
                    .buildAsync(java.net.URI.create(url.replace("http", "ws") + "/v1/sandboxes/" + sandbox + "/terminal?cmd=sh"),
                            new java.net.http.WebSocket.Listener() {
                                @Override
                                public java.util.concurrent.CompletionStage<?> onBinary(java.net.http.WebSocket ws, java.nio.ByteBuffer data, boolean last) {
                                    received.append(java.nio.charset.StandardCharsets.UTF_8.decode(data));
                                    ws.request(1);
                                    return null;
                                }

                                @Override
                                public java.util.concurrent.CompletionStage<?> onText(java.net.http.WebSocket ws, CharSequence data, boolean last) {
                                    if (data.toString().contains("\"exit\"")) exit.complete(data.toString());
                                    ws.request(1);
                                    return null;
                                }
                            }).get(10, java.util.concurrent.TimeUnit.SECONDS);
            socket.sendBinary(java.nio.ByteBuffer.wrap(input.getBytes(java.nio.charset.StandardCharsets.UTF_8)), true)
                    .get(5, java.util.concurrent.TimeUnit.SECONDS);
            socket.sendText("{\"type\": \"eof\"}", true).get(5, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(exit.get(15, java.util.concurrent.TimeUnit.SECONDS)).contains("\"exitCode\":0");
        }
        return received.toString();
    }

    /** The text of an MCP tool's answer, which must not be an error. */
    private static String mcpText(McpSyncClient mcp, String tool, Map<String, Object> arguments) {
        var result = mcp.callTool(new CallToolRequest(tool, arguments));
        String text = ((TextContent) result.content().getFirst()).text();
        assertThat(result.isError()).as(text).isFalse();
        return text;
    }

    private static java.util.List<String> names(JsonNode items) {
        return StreamSupport.stream(items.spliterator(), false).map(item -> item.get("name").asText()).toList();
    }

    private static String exec(RawApi api, String sandbox, String script) {
        var body = JSON.createObjectNode();
        body.putArray("cmd").add("sh").add("-c").add(script);
        var result = api.post("/v1/sandboxes/" + sandbox + "/exec", body.toString());
        assertThat(result.get("exitCode").asInt()).as("exit code of %s: %s", script, result).isZero();
        return result.get("stdout").asText();
    }
}
