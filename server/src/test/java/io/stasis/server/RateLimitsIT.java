package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.sdk.RetryPolicy;
import io.stasis.sdk.StasisClient;
import java.time.Duration;
import java.util.ArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Rate limits on a real service started with the operator's (each key 5 calls at once and 5 a
 * second; each tenant 2 creates a minute), and a tenant's own from its quota: 429 rate_limited
 * with Retry-After past them, nothing done, the root key never limited, the SDK waiting them out.
 */
@Tag("root")
class RateLimitsIT {
    private static ServiceFixture service;
    private static RawApi root;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start("--credential-requests-per-second", "5:5", "--tenant-creates-per-minute", "2");
        root = new RawApi(service.url, service.rootKey);
    }

    @AfterAll
    static void stop() {
        root.close();
        service.close();
    }

    /** A new tenant (its quota as given, JSON) and a key of it. */
    private static String keyOfNewTenant(String name, String quota) {
        String tenant = root.post("/v1/tenants", "{\"name\": \"" + name + "\", \"quota\": " + quota + "}").get("id").asText();
        return root.post("/v1/tenants/" + tenant + "/keys", "{}").get("secret").asText();
    }

    @Test
    void aTenantsOwnRateRefusesPastItsBurstWithRetryAfterAndTheRootKeyIsNeverLimited() throws Exception {
        String key = keyOfNewTenant("slow", "{\"requestsPerSecond\": 1, \"requestBurst\": 3}");
        try (var tenant = new RawApi(service.url, key)) {
            for (int i = 0; i < 3; i++) assertThat(tenant.call("GET", "/v1/sandboxes", null).status()).isEqualTo(200);
            var refused = tenant.call("GET", "/v1/sandboxes", null);
            assertThat(refused.status()).isEqualTo(429);
            assertThat(refused.errorCode()).isEqualTo("rate_limited");
            assertThat(refused.header("Retry-After")).contains("1");
            assertThat(refused.body().path("error").path("details").path("retryAfterMs").asLong()).isBetween(1L, 1000L);
            assertThat(refused.body().path("error").path("details").path("limits").toString()).isEqualTo("[\"tenant\"]");
            assertThat(refused.body().path("error").path("message").asText()).contains("1 a second, bursts of 3");
            Thread.sleep(1100);
            assertThat(tenant.call("GET", "/v1/sandboxes", null).status()).as("a second later, one more").isEqualTo(200);
        }
        for (int i = 0; i < 50; i++) assertThat(root.call("GET", "/v1/sandboxes", null).status()).isEqualTo(200);
        var tenants = root.get("/v1/tenants").get("items");
        var slow = new ArrayList<String>();
        tenants.forEach(t -> {
            if (t.get("name").asText().equals("slow")) slow.add(t.get("quota").toString());
        });
        assertThat(slow).singleElement().asString().contains("\"requestsPerSecond\":1", "\"requestBurst\":3", "\"createsPerMinute\":null");
    }

    @Test
    void eachKeyHasItsOwnRateAndAWebSocketUpgradeCounts() {
        String tenant = root.post("/v1/tenants", "{\"name\": \"two-keys\"}").get("id").asText();
        String first = root.post("/v1/tenants/" + tenant + "/keys", "{}").get("secret").asText();
        String second = root.post("/v1/tenants/" + tenant + "/keys", "{}").get("secret").asText();
        try (var a = new RawApi(service.url, first); var b = new RawApi(service.url, second)) {
            for (int i = 0; i < 5; i++) a.call("GET", "/v1/sandboxes", null);
            var refused = a.call("GET", "/v1/sandboxes", null);
            assertThat(refused.errorCode()).isEqualTo("rate_limited");
            assertThat(refused.body().path("error").path("details").path("limits").toString()).isEqualTo("[\"credential\"]");
            assertThat(b.call("GET", "/v1/sandboxes", null).status()).as("the other key").isEqualTo(200);
        }
    }

    @Test
    void createsPastTheTenantsRateAreRefusedBeforeAnythingIsMadeAndTheSdkWaitsOutTheCallRate() throws Exception {
        String key = keyOfNewTenant("builder", "{\"requestsPerSecond\": 2, \"requestBurst\": 2}");
        var made = new ArrayList<String>();
        try (var tenant = new RawApi(service.url, key)) {
            for (int i = 0; i < 2; i++) {
                var created = tenant.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\"}");
                assertThat(created.status()).as(created.body().toString()).isEqualTo(201);
                made.add(created.body().get("id").asText());
            }
            Thread.sleep(1100); // the call rate's tokens back
            var refused = tenant.call("POST", "/v1/sandboxes", "{\"template\": \"tiny\"}");
            assertThat(refused.errorCode()).isEqualTo("rate_limited");
            assertThat(refused.body().path("error").path("details").path("limits").toString()).isEqualTo("[\"creates\"]");
            assertThat(refused.header("Retry-After").map(Integer::parseInt).orElseThrow()).isBetween(1, 30);
            Thread.sleep(600);
            assertThat(tenant.get("/v1/sandboxes").get("items")).as("nothing made").hasSize(2);
        }
        // The SDK's default policy waits each refusal out: 8 calls at 2 a second, all answered.
        try (var client = StasisClient.builder().url(service.url).apiKey(key)
                .retryPolicy(RetryPolicy.defaults().withMaxAttempts(10)).build()) {
            Thread.sleep(1100);
            long start = System.nanoTime();
            for (int i = 0; i < 8; i++) assertThat(client.sandboxes().list().items()).hasSize(2);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("held to the rate").isGreaterThan(Duration.ofMillis(2500));
            for (String id : made) client.sandboxes().delete(id);
        }
    }
}
