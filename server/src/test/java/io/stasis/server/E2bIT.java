package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The E2B protocol at /e2b against a real service, driven by the official e2b SDK from npm with
 * its own settings only (E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY): keys in E2B's form, commands,
 * files, watches, pause and connect, errors.
 */
@Tag("root")
class E2bIT {
    @AutoClose
    private static ServiceFixture service;

    @BeforeAll
    static void start() throws IOException {
        service = ServiceFixture.start();
    }

    @Test
    void aKeyInE2bsFormWorksOnEveryRouteAndAnUnknownFormIsRefused() {
        try (var root = new RawApi(service.url, service.rootKey)) {
            var issued = root.post("/v1/tenants/ten_default/keys", "{\"format\": \"e2b\"}");
            String secret = issued.get("secret").asText();
            assertThat(secret).matches("e2b_[0-9a-f]{40}");
            try (var e2bKey = new RawApi(service.url, secret)) {
                assertThat(e2bKey.call("GET", "/v1/sandboxes", null).status()).isEqualTo(200);
            }
            assertThat(root.post("/v1/tenants/ten_default/keys", "{}").get("secret").asText()).startsWith("sk_");
            var refused = root.call("POST", "/v1/tenants/ten_default/keys", "{\"format\": \"aws\"}");
            assertThat(refused.status()).isEqualTo(422);
            assertThat(refused.body().path("error").path("message").asText()).contains("format");
            root.call("DELETE", "/v1/tenants/ten_default/keys/" + issued.get("id").asText(), null);
        }
    }

    @Test
    void theE2bSdkRunsCommandsFilesAndPauseAndConnectUnchanged() throws Exception {
        String secret;
        try (var root = new RawApi(service.url, service.rootKey)) {
            secret = root.post("/v1/tenants/ten_default/keys", "{\"format\": \"e2b\"}").get("secret").asText();
        }
        // base has bash and python3, as E2B's default template; its first build on a fresh machine takes minutes
        var session = NodeScripts.runSession("e2b-session", Map.of("E2B_API_URL", service.url + "/e2b",
                "E2B_SANDBOX_URL", service.url + "/e2b/envd", "E2B_API_KEY", secret, "E2B_TEMPLATE", "base", "STASIS_URL", service.url),
                Duration.ofMinutes(20));
        assertThat(session.code()).as(session.output()).isZero();
        assertThat(session.output()).contains("ok: stdout as user in its home").contains("session ok");
        assertThat(service.client.sandboxes().list().items()).isEmpty();
    }
}
