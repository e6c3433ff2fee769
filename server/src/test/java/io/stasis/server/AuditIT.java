package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The audit log on a real service: every call made with a credential, every call refused for its
 * credential, every egress decision of a real sandbox's lookups; listed per tenant or for the root
 * key; and no key, token or secret value anywhere in its files.
 */
@Tag("root")
class AuditIT {
    private static ServiceFixture service;
    private static RawApi root;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start("--dns-names", "allowed.test=10.255.255.9;denied.test=10.255.255.9");
        root = new RawApi(service.url, service.rootKey);
    }

    @AfterAll
    static void stop() {
        root.close();
        service.close();
    }

    private static List<JsonNode> entries(RawApi api, String query) {
        var out = new ArrayList<JsonNode>();
        String cursor = null;
        do {
            var page = api.get("/v1/audit?limit=50" + query + (cursor == null ? "" : "&cursor=" + cursor));
            page.get("items").forEach(out::add);
            cursor = page.get("nextCursor").isNull() ? null : page.get("nextCursor").asText();
        } while (cursor != null);
        return out;
    }

    @Test
    void callsRefusalsAndEgressDecisionsAreLoggedPerTenantWithoutASecret() throws Exception {
        String tenant = root.post("/v1/tenants", "{\"name\": \"audited\"}").get("id").asText();
        var key = root.post("/v1/tenants/" + tenant + "/keys", "{}");
        String keyId = key.get("id").asText();
        String keySecret = key.get("secret").asText();
        String otherTenant = root.post("/v1/tenants", "{\"name\": \"bystander\"}").get("id").asText();
        String otherSecret = root.post("/v1/tenants/" + otherTenant + "/keys", "{}").get("secret").asText();
        String secretValue = "s3cr3t-value-that-must-not-leak";
        List<String> secrets = List.of(service.rootKey, keySecret, otherSecret, secretValue);
        String sandbox, tokenId, tokenSecret;
        try (var api = new RawApi(service.url, keySecret)) {
            assertThat(api.call("POST", "/v1/secrets", "{\"name\": \"API_TOKEN\", \"value\": \"" + secretValue + "\"}").status()).isLessThan(300);
            sandbox = api.post("/v1/sandboxes", "{\"template\": \"tiny\", \"network\": {\"egress\": {\"default\": \"deny\", \"allow\": [\"allowed.test\"]}}}")
                    .get("id").asText();
            api.sh(sandbox, "nslookup allowed.test >/dev/null 2>&1; nslookup denied.test >/dev/null 2>&1; true");
            var token = api.post("/v1/tokens", "{\"scope\": {\"sandbox\": \"" + sandbox + "\"}, \"permissions\": [\"exec\"], \"ttlSeconds\": 600}");
            tokenId = token.get("id").asText();
            tokenSecret = token.get("token").asText();
            assertThat(api.call("GET", "/v1/sandboxes/sbx_doesnotexist00000", null).status()).isEqualTo(404);
        }
        try (var scoped = new RawApi(service.url, tokenSecret); var wrong = new RawApi(service.url, "sk_not_a_key_at_all_000000000000000000")) {
            scoped.sh(sandbox, "true");
            assertThat(wrong.call("GET", "/v1/sandboxes", null).status()).isEqualTo(401);
        }
        secrets = Stream.concat(secrets.stream(), Stream.of(tokenSecret)).toList();

        try (var api = new RawApi(service.url, keySecret)) {
            var own = entries(api, "");
            assertThat(own).allMatch(e -> e.path("tenant").asText().equals(tenant));
            assertThat(own).anyMatch(e -> e.path("kind").asText().equals("call") && e.path("method").asText().equals("POST")
                    && e.path("route").asText().equals("/v1/sandboxes") && e.path("status").asInt() == 201
                    && e.path("outcome").asText().equals("ok") && e.path("credentialId").asText().equals(keyId)
                    && e.path("requestId").asText().startsWith("req_"));
            assertThat(own).anyMatch(e -> e.path("route").asText().equals("/v1/sandboxes/{id}") && e.path("status").asInt() == 404
                    && e.path("outcome").asText().equals("sandbox_not_found") && e.path("resource").asText().equals("sbx_doesnotexist00000"));
            assertThat(own).anyMatch(e -> e.path("credentialId").asText().equals(tokenId) && e.path("route").asText().equals("/v1/sandboxes/{id}/exec")
                    && e.path("resource").asText().equals(sandbox));
            var egress = entries(api, "&kind=egress&sandbox=" + sandbox);
            assertThat(egress).anyMatch(e -> e.path("domain").asText().equals("allowed.test") && e.path("decision").asText().equals("allowed")
                    && e.path("protocol").asText().equals("dns") && e.path("port").asInt() == 53);
            assertThat(egress).anyMatch(e -> e.path("domain").asText().equals("denied.test") && e.path("decision").asText().equals("denied")
                    && e.path("rule").asText().equals("default deny"));
            var byToken = entries(api, "&credential=" + tokenId);
            assertThat(byToken).isNotEmpty().allMatch(e -> e.path("credentialId").asText().equals(tokenId));
            assertThat(api.call("GET", "/v1/audit?tenant=" + otherTenant, null).status()).as("a tenant's key sees its own whatever it asks")
                    .isEqualTo(200);
            assertThat(entries(api, "&tenant=" + otherTenant)).allMatch(e -> e.path("tenant").asText().equals(tenant));
            assertThat(api.call("GET", "/v1/audit?kind=everything", null).errorCode()).isEqualTo("invalid_request");
            assertThat(api.call("GET", "/v1/audit?cursor=../../etc/passwd", null).errorCode()).isEqualTo("invalid_request");
            assertThat(api.call("GET", "/v1/audit?since=yesterday", null).errorCode()).isEqualTo("invalid_request");
        }
        try (var other = new RawApi(service.url, otherSecret)) {
            assertThat(entries(other, "")).as("another tenant sees none of them").noneMatch(e -> e.path("tenant").asText().equals(tenant));
        }
        var everyone = entries(root, "&kind=call");
        assertThat(everyone).anyMatch(e -> e.path("status").asInt() == 401 && !e.has("tenant") && !e.has("credentialId")
                && e.path("outcome").asText().equals("unauthenticated"));
        assertThat(everyone).anyMatch(e -> e.path("root").asBoolean() && e.path("route").asText().equals("/v1/tenants")
                && e.path("method").asText().equals("POST"));
        assertThat(entries(root, "&tenant=" + tenant)).isNotEmpty().allMatch(e -> e.path("tenant").asText().equals(tenant));

        // The files themselves: JSON lines, no secret of any kind in them.
        var files = new ArrayList<Path>();
        try (var list = Files.list(service.dataDir.resolve("audit"))) {
            list.forEach(files::add);
        }
        assertThat(files).isNotEmpty();
        for (Path file : files) {
            String text = Files.readString(file);
            for (String secret : secrets) assertThat(text).as(file + " holds a secret").doesNotContain(secret);
            assertThat(text.lines()).allMatch(line -> line.startsWith("{\"at\":\"") && line.endsWith("}"));
        }
    }
}
