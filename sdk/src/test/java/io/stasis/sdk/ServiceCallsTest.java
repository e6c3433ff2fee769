package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** The service routes outside {@code /v1/sandboxes}: metrics and the OpenAPI description, both without a key. */
class ServiceCallsTest {
    @AutoClose
    final FakeApi api = FakeApi.start();

    @AutoClose
    final StasisClient client = api.client();

    @Test
    void metricsAreTheServersTextWithoutAKey() {
        api.on("GET /metrics", (request, exchange) ->
                FakeApi.respond(exchange, 200, "text/plain; version=0.0.4", "stasis_sandboxes 2\n"));

        assertThat(client.metrics()).isEqualTo("stasis_sandboxes 2\n");
        assertThat(api.last().header("Authorization")).isNull();
    }

    @Test
    void theOpenApiSpecIsFetchedWithoutAKey() {
        api.on("GET /v1/openapi.yaml", (request, exchange) ->
                FakeApi.respond(exchange, 200, "application/yaml", "openapi: 3.1.0\n"));

        assertThat(client.openApiSpec()).startsWith("openapi: 3.1.0");
        assertThat(api.last().header("Authorization")).isNull();
        assertThat(api.last().header("Accept")).isEqualTo("application/yaml");
    }
}
