package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.ForbiddenException;
import io.stasis.sdk.StasisClient;
import io.stasis.sdk.TenantInfo;
import io.stasis.sdk.TenantQuota;
import io.stasis.sdk.TokenInfo;
import io.stasis.sdk.TokenRequest;
import io.stasis.server.http.OpenApiSpec;
import io.stasis.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Tenants, scoped tokens and quotas against a real service with real sandboxes. The walks over
 * openapi.yaml's operations cover every endpoint family, present and future: a route added to the
 * spec is held to the same rules without changing this test.
 */
@Tag("root")
class TenantsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final OpenApiSpec SPEC = OpenApiSpec.load();
    private static final ListAppender<ILoggingEvent> LOGS = new ListAppender<>();
    private static final List<String> SECRETS_SHOWN = new ArrayList<>();

    private static ServiceFixture service;
    private static RawApi root;
    private static RawApi alice;
    private static RawApi bob;
    private static String aliceTenant;
    private static String aliceSandbox;
    private static String aliceOther;
    private static String aliceCheckpoint;
    private static long alicePid;
    private static String alicePreview;

    @BeforeAll
    static void start() throws IOException {
        var stasis = (Logger) LoggerFactory.getLogger("io.stasis");
        stasis.setLevel(Level.DEBUG); // request logs too: they carry the credential's id, never its secret
        LOGS.start();
        ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(LOGS);

        service = ServiceFixture.start();
        SECRETS_SHOWN.add(service.rootKey);
        root = new RawApi(service.url, service.rootKey);
        var a = tenantWithKey("alice", null);
        aliceTenant = a.get("tenant").get("id").asText();
        alice = new RawApi(service.url, a.get("secret").asText());
        bob = new RawApi(service.url, tenantWithKey("bob", null).get("secret").asText());

        aliceSandbox = alice.post("/v1/sandboxes", "{\"template\": \"tiny\", \"name\": \"web\"}").get("id").asText();
        aliceOther = alice.post("/v1/sandboxes", "{\"template\": \"tiny\"}").get("id").asText();
        aliceCheckpoint = alice.post("/v1/sandboxes/" + aliceSandbox + "/checkpoints", "{\"memory\": false}").get("id").asText();
        alicePid = alice.post("/v1/sandboxes/" + aliceSandbox + "/processes", "{\"cmd\": [\"sleep\", \"600\"]}").get("pid").asLong();
        alicePreview = alice.post("/v1/sandboxes/" + aliceSandbox + "/previews", "{\"port\": 8080}").get("id").asText();
        alice.call("POST", "/v1/secrets", "{\"name\": \"API_TOKEN\", \"value\": \"alice-secret-value-123\"}");
        SECRETS_SHOWN.add("alice-secret-value-123");
        aliceVolume = alice.post("/v1/volumes", "{\"name\": \"vault\", \"sizeMb\": 32}").get("id").asText();
        aliceVolumeSnapshot = alice.post("/v1/volumes/vault/snapshots", null).get("id").asText();
        aliceVolumeSync = alice.post("/v1/volumes/vault/sync", null).get("id").asText();
    }

    private static String aliceVolume;
    private static String aliceVolumeSnapshot;
    private static String aliceVolumeSync;

    /** Every operation of the spec whose path names a volume, filled in with {@code volume}. */
    private static List<String[]> volumeOperations(String volume) {
        var out = new ArrayList<String[]>();
        var paths = SPEC.root().path("paths");
        for (var it = paths.fieldNames(); it.hasNext(); ) {
            String path = it.next();
            if (!path.contains("{vid}")) continue;
            for (var m = paths.get(path).fieldNames(); m.hasNext(); ) {
                String method = m.next();
                if (method.equals("parameters")) continue;
                out.add(new String[]{method.toUpperCase(), path.replace("{vid}", volume).replace("{sid}", aliceVolumeSnapshot)
                        .replace("{sync}", aliceVolumeSync)});
            }
        }
        assertThat(out).as("volume operations in the spec").hasSizeGreaterThan(6);
        return out;
    }

    @Test
    void everyRouteOfAnotherTenantsVolumeAnswers404AndChangesNothing() {
        for (String ref : List.of(aliceVolume, "vault")) {
            for (var op : volumeOperations(ref)) {
                var response = bob.call(op[0], op[1], op[0].equals("GET") || op[0].equals("DELETE") ? null : "{}");
                assertThat(response.status()).as(op[0] + " " + op[1] + " as another tenant: " + response.body()).isEqualTo(404);
                assertThat(response.errorCode()).as(op[0] + " " + op[1]).isEqualTo("volume_not_found");
            }
        }
        // Nor can bob mount it, branch from its snapshot, restore its syncs by its id, or scope a token to it.
        var mount = bob.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\", \"volumes\": [{\"volume\": \"" + aliceVolume + "\", \"path\": \"/v\"}]}");
        assertThat(mount.errorCode()).isEqualTo("volume_not_found");
        assertThat(bob.call("POST", "/v1/volumes", "{\"name\": \"steal\", \"fromSnapshot\": \"" + aliceVolumeSnapshot + "\"}").errorCode())
                .isEqualTo("volume_snapshot_not_found");
        assertThat(bob.call("POST", "/v1/tokens", "{\"scope\": {\"volume\": \"" + aliceVolume + "\"}, \"permissions\": [\"volume:read\"]}")
                .errorCode()).isEqualTo("volume_not_found");
        assertThat(bob.get("/v1/volumes").get("items")).isEmpty();
        assertThat(alice.get("/v1/volumes/vault").get("id").asText()).isEqualTo(aliceVolume);
        assertThat(alice.get("/v1/volumes/vault/snapshots").get("items")).hasSize(1);
        assertThat(alice.get("/v1/volumes/vault/syncs").get("items")).hasSize(1);
    }

    @Test
    void volumesCountTowardTheDiskQuota() {
        var carol = tenantWithKey("carol", "{\"diskMb\": 100}");
        var api = new RawApi(service.url, carol.get("secret").asText());
        assertThat(api.post("/v1/volumes", "{\"name\": \"first\", \"sizeMb\": 64}").get("sizeMb").asLong()).isEqualTo(64);
        var refused = api.call("POST", "/v1/volumes", "{\"name\": \"second\", \"sizeMb\": 64}");
        assertThat(refused.status()).isEqualTo(429);
        assertThat(refused.errorCode()).isEqualTo("quota_exceeded");
        assertThat(refused.body().path("error").path("details").path("quota").asText()).isEqualTo("diskMb");
        assertThat(refused.body().path("error").path("details").path("used").asLong()).isEqualTo(64);
        assertThat(api.get("/v1/volumes").get("items")).hasSize(1);
        assertThat(root.get("/v1/tenants/" + carol.get("tenant").get("id").asText()).path("usage").path("diskMb").asLong()).isEqualTo(64);
        assertThat(api.call("DELETE", "/v1/volumes/first", null).status()).isEqualTo(204);
        assertThat(api.post("/v1/volumes", "{\"name\": \"second\", \"sizeMb\": 96}").get("sizeMb").asLong()).isEqualTo(96);
        api.call("DELETE", "/v1/volumes/second", null);
    }

    @Test
    void aVolumeScopedTokenDoesOnlyWhatItsPermissionsAllowOnItsOneVolume() {
        String other = alice.post("/v1/volumes", "{\"name\": \"other-vol\", \"sizeMb\": 32}").get("id").asText();
        var issued = alice.post("/v1/tokens", "{\"scope\": {\"volume\": \"vault\"}, \"permissions\": [\"volume:read\"], \"ttlSeconds\": 600}");
        SECRETS_SHOWN.add(issued.get("token").asText());
        assertThat(issued.get("scope").get("volume").asText()).as("the name resolved to the id").isEqualTo(aliceVolume);
        var token = new RawApi(service.url, issued.get("token").asText());
        assertThat(token.get("/v1/volumes/" + aliceVolume).get("name").asText()).isEqualTo("vault");
        assertThat(token.get("/v1/volumes/vault/snapshots").get("items")).hasSize(1);
        var denied = token.call("POST", "/v1/volumes/vault/snapshots", null);
        assertThat(denied.status()).isEqualTo(403);
        assertThat(denied.body().path("error").path("details").path("permission").asText()).isEqualTo("volume:write");
        assertThat(token.call("DELETE", "/v1/volumes/vault", null).status()).isEqualTo(403);
        for (var op : volumeOperations(other)) {
            assertThat(token.call(op[0], op[1], op[0].equals("GET") || op[0].equals("DELETE") ? null : "{}").status())
                    .as(op[0] + " " + op[1] + " with a token for another volume").isEqualTo(404);
        }
        assertThat(token.call("GET", "/v1/sandboxes/" + aliceSandbox, null).status()).as("sandboxes are outside its scope").isEqualTo(404);
        assertThat(token.call("GET", "/v1/volumes", null).status()).as("tenant-wide routes").isEqualTo(403);
        assertThat(token.call("POST", "/v1/volumes", "{\"name\": \"x\"}").status()).isEqualTo(403);
        alice.call("DELETE", "/v1/volumes/other-vol", null);
        alice.call("DELETE", "/v1/tokens/" + issued.get("id").asText(), null);
    }

    @Test
    void forkSparesHoldTheTenantsQuotaWhileTheyWait() {
        var spender = tenantWithKey("spender", "{\"runningSandboxes\": 3}");
        var api = new RawApi(service.url, spender.get("secret").asText());
        String parent = api.post("/v1/sandboxes", "{\"template\": \"tiny\"}").get("id").asText();
        try {
            String cid = api.post("/v1/sandboxes/" + parent + "/checkpoints", "{\"memory\": true, \"spares\": 5}").get("id").asText();
            // Room for two more running sandboxes: two spares, not five.
            Await.until("the spares the quota allows", Duration.ofSeconds(60),
                    () -> api.get("/v1/checkpoints/" + cid).get("spares").get("ready").asInt() == 2);
            assertThat(api.get("/v1/checkpoints/" + cid).get("spares").get("wanted").asInt()).isEqualTo(5);
            var refused = api.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\"}");
            assertThat(refused.status()).as("the spares hold the quota").isEqualTo(429);
            assertThat(refused.body().path("error").path("details").path("used").asInt()).isEqualTo(3);
            // A fork of both takes the two spares: they count as sandboxes now, instead of as spares, and nothing new is admitted.
            var forks = api.post("/v1/sandboxes/" + parent + "/fork", "{\"checkpoint\": \"" + cid + "\", \"count\": 2}").get("items");
            assertThat(api.get("/v1/tenants/" + spender.get("tenant").get("id").asText()).get("usage").get("runningSandboxes").asInt()).isEqualTo(3);
            for (JsonNode fork : forks) api.call("DELETE", "/v1/sandboxes/" + fork.get("id").asText(), null);
            api.call("PUT", "/v1/checkpoints/" + cid + "/spares", "{\"count\": 0}");
            assertThat(api.post("/v1/sandboxes", "{\"template\": \"tiny\"}").get("id").asText()).as("the quota given back").isNotBlank();
        } finally {
            for (JsonNode s : api.get("/v1/sandboxes").get("items")) api.call("DELETE", "/v1/sandboxes/" + s.get("id").asText(), null);
        }
    }

    /** Creates a tenant and a key of it; returns {@code {tenant, secret}}. */
    private static JsonNode tenantWithKey(String name, String quota) {
        var tenant = root.post("/v1/tenants", "{\"name\": \"" + name + "\"" + (quota == null ? "" : ", \"quota\": " + quota) + "}");
        var key = root.post("/v1/tenants/" + tenant.get("id").asText() + "/keys", "{}");
        SECRETS_SHOWN.add(key.get("secret").asText());
        var out = JSON.createObjectNode();
        out.set("tenant", tenant);
        out.put("secret", key.get("secret").asText());
        return out;
    }

    @AfterAll
    static void stop() {
        try {
            if (service != null) service.close();
        } finally {
            ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(LOGS);
            ((Logger) LoggerFactory.getLogger("io.stasis")).setLevel(null);
        }
        // After everything, including shutdown: no key, token or secret value was ever logged.
        for (var event : LOGS.list) {
            String line = event.getFormattedMessage() + " " + event.getKeyValuePairs()
                    + (event.getThrowableProxy() == null ? "" : " " + event.getThrowableProxy().getMessage());
            for (String secret : SECRETS_SHOWN) assertThat(line).as("a log line").doesNotContain(secret);
        }
        assertThat(LOGS.list).as("the logs were captured").isNotEmpty();
    }

    /** Every operation of the spec whose path names a sandbox or a checkpoint, with its path filled in. */
    private static List<String[]> resourceOperations(String sandbox) {
        var out = new ArrayList<String[]>();
        var paths = SPEC.root().path("paths");
        for (var it = paths.fieldNames(); it.hasNext(); ) {
            String path = it.next();
            // The terminal is a WebSocket: aTerminalOnAnotherTenantsSandboxIsRefusedAtTheUpgrade.
            if (!path.contains("{id}") && !path.contains("{cid}") || path.endsWith("/terminal")) continue;
            for (var m = paths.get(path).fieldNames(); m.hasNext(); ) {
                String method = m.next();
                if (method.equals("parameters")) continue;
                String filled = path.replace("{id}", sandbox).replace("{cid}", aliceCheckpoint).replace("{pid}", Long.toString(alicePid))
                        .replace("{previewId}", alicePreview);
                out.add(new String[]{method.toUpperCase(), filled + (path.contains("/files") ? "?path=/etc/hostname" : "")});
            }
        }
        assertThat(out).as("sandbox and checkpoint operations in the spec").hasSizeGreaterThan(30);
        return out;
    }

    @Test
    void everyRouteOfAnotherTenantsSandboxOrCheckpointAnswers404AndChangesNothing() {
        for (var op : resourceOperations(aliceSandbox)) {
            var response = bob.call(op[0], op[1], op[0].equals("GET") || op[0].equals("DELETE") ? null : "{}");
            assertThat(response.status()).as(op[0] + " " + op[1] + " as another tenant: " + response.body()).isEqualTo(404);
            assertThat(response.errorCode()).as(op[0] + " " + op[1]).isIn("sandbox_not_found", "checkpoint_not_found");
        }
        // By name too: bob has no sandbox called "web", and alice's stays hers.
        assertThat(bob.call("GET", "/v1/sandboxes/web", null).status()).isEqualTo(404);
        assertThat(alice.get("/v1/sandboxes/" + aliceSandbox).get("state").asText()).isEqualTo("running");
        assertThat(alice.get("/v1/checkpoints/" + aliceCheckpoint).get("id").asText()).isEqualTo(aliceCheckpoint);
        assertThat(alice.get("/v1/sandboxes/" + aliceSandbox + "/processes/" + alicePid).get("status").asText()).isEqualTo("running");
    }

    @Test
    void aTerminalOnAnotherTenantsSandboxIsRefusedBeforeAnythingStarts() throws Exception {
        var http = HttpClient.newHttpClient();
        var messages = new LinkedBlockingQueue<String>();
        var closed = new CompletableFuture<Integer>();
        try {
            http.newWebSocketBuilder().header("Authorization", "Bearer " + bobKey())
                    .buildAsync(URI.create(service.url.replace("http", "ws") + "/v1/sandboxes/" + aliceSandbox + "/terminal"),
                            new WebSocket.Listener() {
                                @Override
                                public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                                    messages.add(data.toString());
                                    ws.request(1);
                                    return null;
                                }

                                @Override
                                public CompletionStage<?> onClose(WebSocket ws, int status, String reason) {
                                    closed.complete(status);
                                    return null;
                                }
                            }).join();
            assertThat(closed.get(30, TimeUnit.SECONDS)).isEqualTo(1008);
            assertThat(messages.poll()).contains("\"sandbox_not_found\"");
        } finally {
            http.close();
        }
        assertThat(alice.get("/v1/sandboxes/" + aliceSandbox + "/processes").get("items").toString())
                .as("no shell was started in alice's sandbox").doesNotContain("terminal");
    }

    private static String bobKey() {
        try {
            var field = RawApi.class.getDeclaredField("key");
            field.setAccessible(true);
            return (String) field.get(bob);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void namesListsSecretsAndEventsAreEachTenantsOwn() {
        var bobsWeb = bob.post("/v1/sandboxes", "{\"template\": \"tiny\", \"name\": \"web\"}").get("id").asText();
        try {
            assertThat(bob.get("/v1/sandboxes/web").get("id").asText()).isEqualTo(bobsWeb);
            assertThat(alice.get("/v1/sandboxes/web").get("id").asText()).isEqualTo(aliceSandbox);
            assertThat(ids(bob.get("/v1/sandboxes"))).containsExactly(bobsWeb);
            assertThat(ids(alice.get("/v1/sandboxes"))).contains(aliceSandbox, aliceOther).doesNotContain(bobsWeb);
            assertThat(ids(root.get("/v1/sandboxes"))).doesNotContain(aliceSandbox, bobsWeb);

            assertThat(bob.get("/v1/secrets").get("items")).isEmpty();
            assertThat(bob.call("DELETE", "/v1/secrets/API_TOKEN", null).status()).isEqualTo(404);
            assertThat(bob.call("POST", "/v1/secrets", "{\"name\": \"API_TOKEN\", \"value\": \"bob-value-456\"}").status()).isEqualTo(201);
            SECRETS_SHOWN.add("bob-value-456");
            assertThat(alice.get("/v1/secrets").get("items").get(0).get("name").asText()).isEqualTo("API_TOKEN");

            var bobEvents = bob.get("/v1/events?limit=1000").get("items");
            for (var event : bobEvents)
                assertThat(event.path("data").path("sandboxId").asText("")).isIn("", bobsWeb);
            assertThat(bobEvents.toString()).contains(bobsWeb).doesNotContain(aliceSandbox);
            assertThat(alice.get("/v1/events?limit=1000").get("items").toString()).contains(aliceSandbox).doesNotContain(bobsWeb);
        } finally {
            bob.call("DELETE", "/v1/sandboxes/" + bobsWeb, null);
        }
        assertThat(bob.get("/v1/events?limit=1000").get("items").toString()).as("the deleted event is bob's").contains("\"deleted\"");
    }

    @Test
    void tenantsAreManagedWithTheRootKeyOnly() {
        assertThat(alice.call("POST", "/v1/tenants", "{\"name\": \"mallory\"}").status()).isEqualTo(403);
        assertThat(alice.call("GET", "/v1/tenants", null).status()).isEqualTo(403);
        assertThat(alice.call("POST", "/v1/tenants/" + aliceTenant + "/keys", "{}").status()).isEqualTo(403);
        assertThat(alice.get("/v1/tenants/" + aliceTenant).get("usage").get("runningSandboxes").asInt()).isGreaterThanOrEqualTo(2);
        var others = root.get("/v1/tenants").get("items");
        for (var tenant : others)
            if (!tenant.get("id").asText().equals(aliceTenant))
                assertThat(alice.call("GET", "/v1/tenants/" + tenant.get("id").asText(), null).status()).isEqualTo(404);
        assertThat(root.call("POST", "/v1/tenants", "{\"name\": \"alice\"}").errorCode()).isEqualTo("name_taken");
        assertThat(root.call("DELETE", "/v1/tenants/" + aliceTenant, null).status()).as("it has sandboxes").isEqualTo(409);
        assertThat(root.call("DELETE", "/v1/tenants/ten_default", null).status()).isEqualTo(409);

        var carol = tenantWithKey("carol", null);
        var carolApi = new RawApi(service.url, carol.get("secret").asText());
        String carolId = carol.get("tenant").get("id").asText();
        assertThat(carolApi.call("GET", "/v1/sandboxes", null).status()).isEqualTo(200);
        String keyId = root.get("/v1/tenants/" + carolId + "/keys").get("items").get(0).get("id").asText();
        assertThat(root.get("/v1/tenants/" + carolId + "/keys").toString()).doesNotContain("sk_");
        assertThat(root.call("DELETE", "/v1/tenants/" + carolId + "/keys/" + keyId, null).status()).isEqualTo(204);
        assertThat(carolApi.call("GET", "/v1/sandboxes", null).status()).as("a revoked key stops at once").isEqualTo(401);
        assertThat(root.call("DELETE", "/v1/tenants/" + carolId, null).status()).isEqualTo(204);
        assertThat(root.call("GET", "/v1/tenants/" + carolId, null).errorCode()).isEqualTo("tenant_not_found");
    }

    @Test
    void aScopedTokenDoesOnlyWhatItsPermissionsAllowOnItsOneSandbox() {
        var issued = alice.post("/v1/tokens", "{\"scope\": {\"sandbox\": \"web\"}, \"permissions\": [\"exec\", \"files:read\"],"
                + " \"ttlSeconds\": 600, \"name\": \"agent\"}");
        String secret = issued.get("token").asText();
        SECRETS_SHOWN.add(secret);
        assertThat(issued.get("scope").get("sandbox").asText()).as("the name resolved to the id").isEqualTo(aliceSandbox);
        var token = new RawApi(service.url, secret);

        assertThat(token.sh(aliceSandbox, "echo hi")).isEqualTo("hi\n");
        assertThat(token.call("GET", "/v1/sandboxes/web/files/stat?path=/", null).status()).as("by name too").isEqualTo(200);
        var denied = token.call("PUT", "/v1/sandboxes/" + aliceSandbox + "/files?path=/tmp/x", "{}");
        assertThat(denied.status()).isEqualTo(403);
        assertThat(denied.body().path("error").path("details").path("permission").asText()).isEqualTo("files:write");
        assertThat(token.call("DELETE", "/v1/sandboxes/" + aliceSandbox, null).status()).isEqualTo(403);
        assertThat(token.call("POST", "/v1/sandboxes/" + aliceSandbox + "/pause", null).status()).isEqualTo(403);

        // Another sandbox of the same tenant does not exist for the token, on every route.
        for (var op : resourceOperations(aliceOther)) {
            if (op[1].contains(aliceCheckpoint)) continue; // the checkpoint is of its own sandbox: see below
            var response = token.call(op[0], op[1], op[0].equals("GET") || op[0].equals("DELETE") ? null : "{}");
            assertThat(response.status()).as(op[0] + " " + op[1] + " with a token for another sandbox").isEqualTo(404);
        }
        assertThat(token.call("GET", "/v1/checkpoints/" + aliceCheckpoint, null).status()).as("no sandbox:read").isEqualTo(403);

        // Routes of the tenant as a whole are for API keys; whoami answers any credential about itself.
        var paths = SPEC.root().path("paths");
        for (var it = paths.fieldNames(); it.hasNext(); ) {
            String path = it.next();
            if (!path.startsWith("/v1/") || path.contains("{id}") || path.contains("{cid}") || path.contains("{vid}")
                    || path.equals("/v1/openapi.yaml") || path.equals("/v1/whoami")) continue;
            for (var m = paths.get(path).fieldNames(); m.hasNext(); ) {
                String method = m.next().toUpperCase();
                if (method.equals("PARAMETERS")) continue;
                String filled = path.replace("{tid}", aliceTenant).replace("{name}", "API_TOKEN").replace("{tokenId}", issued.get("id").asText())
                        .replace("{kid}", "key_0000000000000000");
                var response = token.call(method, filled, method.equals("GET") || method.equals("DELETE") ? null : "{}");
                assertThat(response.status()).as(method + " " + filled + " with a token").isEqualTo(403);
            }
        }
        assertThat(alice.get("/v1/secrets").get("items")).as("the token's DELETE changed nothing").hasSize(1);

        assertThat(alice.get("/v1/tokens").toString()).contains(issued.get("id").asText()).doesNotContain(secret);
        assertThat(bob.call("DELETE", "/v1/tokens/" + issued.get("id").asText(), null).status()).as("another tenant's token").isEqualTo(404);
        assertThat(alice.call("DELETE", "/v1/tokens/" + issued.get("id").asText(), null).status()).isEqualTo(204);
        assertThat(token.call("POST", "/v1/sandboxes/" + aliceSandbox + "/exec", "{\"cmd\": [\"true\"]}").status())
                .as("revoked: refused at once").isEqualTo(401);
    }

    @Test
    void anExpiredTokenIsRefused() throws InterruptedException {
        var issued = alice.post("/v1/tokens", "{\"scope\": {\"sandbox\": \"" + aliceSandbox + "\"}, \"permissions\": [\"sandbox:read\"],"
                + " \"ttlSeconds\": 1}");
        SECRETS_SHOWN.add(issued.get("token").asText());
        var token = new RawApi(service.url, issued.get("token").asText());
        long deadline = Instant.parse(issued.get("expiresAt").asText()).toEpochMilli();
        TimeUnit.MILLISECONDS.sleep(Math.max(0, deadline - System.currentTimeMillis()) + 50);
        var response = token.call("GET", "/v1/sandboxes/" + aliceSandbox, null);
        assertThat(response.status()).isEqualTo(401);
        assertThat(response.body().path("error").path("message").asText()).contains("expired");
    }

    @Test
    void badTokenRequestsAreClearErrors() {
        assertThat(alice.call("POST", "/v1/tokens", "{\"scope\": {\"sandbox\": \"" + aliceSandbox + "\"}, \"permissions\": []}").status())
                .isEqualTo(422);
        assertThat(alice.call("POST", "/v1/tokens", "{\"scope\": {\"sandbox\": \"" + aliceSandbox + "\"}, \"permissions\": [\"root\"]}")
                .body().toString()).contains("sandbox:read");
        assertThat(alice.call("POST", "/v1/tokens", "{\"scope\": {}, \"permissions\": [\"exec\"]}").status()).isEqualTo(422);
        assertThat(alice.call("POST", "/v1/tokens", "{\"scope\": {\"sandbox\": \"" + aliceSandbox + "\"}, \"permissions\": [\"volume:read\"]}")
                .status()).isEqualTo(422);
        assertThat(alice.call("POST", "/v1/tokens", "{\"scope\": {\"sandbox\": \"" + aliceSandbox + "\"}, \"permissions\": [\"exec\"],"
                + " \"ttlSeconds\": 99999999}").status()).isEqualTo(422);
        assertThat(bob.call("POST", "/v1/tokens", "{\"scope\": {\"sandbox\": \"" + aliceSandbox + "\"}, \"permissions\": [\"exec\"]}")
                .errorCode()).as("another tenant's sandbox").isEqualTo("sandbox_not_found");
    }

    @EachRuntime
    void quotasRefuseCreateForkAndResumeWith429NamingTheQuota(String runtime) {
        ServiceFixture.assumeRuntime(runtime);
        var dave = tenantWithKey("dave-" + runtime, "{\"runningSandboxes\": 1, \"memoryMb\": 512}");
        var api = new RawApi(service.url, dave.get("secret").asText());
        String daveId = dave.get("tenant").get("id").asText();
        String first = api.post("/v1/sandboxes", "{\"runtime\": \"" + runtime + "\", \"template\": \"tiny\", \"resources\": {\"memoryMb\": 256}}").get("id").asText();
        try {
            var refused = api.call("POST", "/v1/sandboxes", "{\"runtime\": \"" + runtime + "\", \"template\": \"tiny\", \"resources\": {\"memoryMb\": 128}}");
            assertThat(refused.status()).isEqualTo(429);
            assertThat(refused.body().path("error").path("details")).isEqualTo(JSON.valueToTree(
                    Map.of("quota", "runningSandboxes", "limit", 1, "used", 1, "requested", 1)));
            assertThat(api.call("POST", "/v1/sandboxes/" + first + "/fork", "{}").errorCode()).isEqualTo("quota_exceeded");

            root.call("PATCH", "/v1/tenants/" + daveId, "{\"quota\": {\"runningSandboxes\": 5}}");
            var memory = api.call("POST", "/v1/sandboxes", "{\"runtime\": \"" + runtime + "\", \"template\": \"tiny\", \"resources\": {\"memoryMb\": 512}}");
            assertThat(memory.status()).isEqualTo(429);
            assertThat(memory.body().path("error").path("details").path("quota").asText()).isEqualTo("memoryMb");

            // A hibernated sandbox holds no memory: another fits, and then the first cannot come back.
            api.post("/v1/sandboxes/" + first + "/hibernate", null);
            String second = api.post("/v1/sandboxes", "{\"runtime\": \"" + runtime + "\", \"template\": \"tiny\", \"resources\": {\"memoryMb\": 512}}").get("id").asText();
            var resume = api.call("POST", "/v1/sandboxes/" + first + "/resume", null);
            assertThat(resume.status()).isEqualTo(429);
            assertThat(api.get("/v1/sandboxes/" + first).get("state").asText()).isEqualTo("hibernated");
            var usage = api.get("/v1/tenants/" + daveId).get("usage");
            assertThat(usage.get("runningSandboxes").asInt()).isEqualTo(1);
            assertThat(usage.get("memoryMb").asInt()).isEqualTo(512);
            long disk = api.get("/v1/sandboxes/" + first).get("resources").get("diskMb").asLong()
                    + api.get("/v1/sandboxes/" + second).get("resources").get("diskMb").asLong();
            assertThat(usage.get("diskMb").asLong()).as("disk counts hibernated sandboxes too").isEqualTo(disk);

            // Disk: the limits of all the tenant's sandboxes, added up.
            root.call("PATCH", "/v1/tenants/" + daveId, "{\"quota\": {\"memoryMb\": 100000, \"diskMb\": " + (disk + 100) + "}}");
            var full = api.call("POST", "/v1/sandboxes", "{\"runtime\": \"" + runtime + "\", \"template\": \"tiny\", \"resources\": {\"diskMb\": 200}}");
            assertThat(full.status()).isEqualTo(429);
            assertThat(full.body().path("error").path("details").path("quota").asText()).isEqualTo("diskMb");
            api.call("DELETE", "/v1/sandboxes/" + second, null);
            assertThat(api.post("/v1/sandboxes/" + first + "/resume", null).get("state").asText()).isEqualTo("running");
        } finally {
            api.call("DELETE", "/v1/sandboxes/" + first, null);
        }
    }

    @Test
    void theSdkDrivesTenantsKeysAndTokens() {
        var sdkTenant = service.client.tenants().create("erin", TenantQuota.unlimited().withRunningSandboxes(3));
        assertThat(sdkTenant.quota().runningSandboxes()).isEqualTo(3);
        var key = service.client.tenants().issueKey(sdkTenant.id());
        SECRETS_SHOWN.add(key.secret());
        try (var erin = StasisClient.connect(service.url, key.secret())) {
            var sandbox = erin.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
            var token = erin.tokens().issue(TokenRequest.forSandbox(sandbox.id(), "exec")
                    .withTtl(Duration.ofMinutes(5)).withName("sdk"));
            SECRETS_SHOWN.add(token.token());
            assertThat(token.scope().sandbox()).isEqualTo(sandbox.id());
            try (var agent = StasisClient.connect(service.url, token.token())) {
                assertThat(agent.sandboxes().exec(sandbox.id(), ExecRequest.of("echo", "via-token")).stdout()).isEqualTo("via-token\n");
                Assertions.assertThatThrownBy(() -> agent.sandboxes().list())
                        .isInstanceOf(ForbiddenException.class);
            }
            assertThat(erin.tokens().list()).extracting(TokenInfo::id).containsExactly(token.id());
            assertThat(erin.tenants().get(sdkTenant.id()).usage().runningSandboxes()).isEqualTo(1);
            erin.tokens().revoke(token.id());
            sandbox.delete();
        }
        var updated = service.client.tenants().updateQuota(sdkTenant.id(), TenantQuota.unlimited().withMemoryMb(4096));
        assertThat(updated.quota()).isEqualTo(new TenantQuota(3, 4096L, null));
        service.client.tenants().revokeKey(sdkTenant.id(), key.id());
        service.client.tenants().delete(sdkTenant.id());
        assertThat(service.client.tenants().list()).extracting(TenantInfo::name).doesNotContain("erin");
    }

    private static List<String> ids(JsonNode list) {
        var out = new ArrayList<String>();
        list.get("items").forEach(item -> out.add(item.get("id").asText()));
        return out;
    }
}
