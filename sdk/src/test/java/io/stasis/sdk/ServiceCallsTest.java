package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.Supplier;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** The service routes outside {@code /v1/sandboxes}: metrics (with the client's key) and the OpenAPI description (without one). */
class ServiceCallsTest {
    @AutoClose
    final FakeApi api = FakeApi.start();

    @AutoClose
    final StasisClient client = api.client();

    /** Serves {@code body} at {@code path} and fetches it with {@code call}. */
    private String fetched(String path, String type, String body, Supplier<String> call) {
        api.on("GET " + path, (request, exchange) -> FakeApi.respond(exchange, 200, type, body));
        return call.get();
    }

    @Test
    void metricsAreTheServersTextFetchedWithTheKey() {
        assertThat(fetched("/metrics", "text/plain; version=0.0.4", "stasis_sandboxes 2\n", client::metrics))
                .isEqualTo("stasis_sandboxes 2\n");
        assertThat(api.last().header("Authorization")).as("the root key, unless the server runs with --metrics-public").startsWith("Bearer ");
    }

    @Test
    void theOpenApiSpecIsFetchedWithoutAKey() {
        assertThat(fetched("/v1/openapi.yaml", "application/yaml", "openapi: 3.1.0\n", client::openApiSpec))
                .startsWith("openapi: 3.1.0");
        assertThat(api.last().header("Authorization")).isNull();
        assertThat(api.last().header("Accept")).isEqualTo("application/yaml");
    }
}
