package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class PreviewsTest {
    static final String PRIVATE = """
            {"id": "prv_1", "sandboxId": "sbx_1", "port": 3000, "public": false,
             "url": "http://3000-sbx-1.localhost:7071/", "pathUrl": "http://localhost:7071/preview/sbx_1/3000/",
             "token": "tok", "createdAt": "2026-11-29T10:00:00Z", "expiresAt": "2026-11-29T12:00:00Z"}""";
    static final String PUBLIC = """
            {"id": "prv_2", "sandboxId": "sbx_1", "port": 8000, "public": true,
             "url": "http://8000-sbx-1.localhost:7071/", "pathUrl": "http://localhost:7071/preview/sbx_1/8000/",
             "createdAt": "2026-11-29T10:00:00Z", "expiresAt": null}""";

    private FakeApi api;
    private StasisClient client;

    @BeforeEach
    void start() throws IOException {
        api = new FakeApi();
        client = StasisClient.builder().url(api.url()).apiKey("sk_test").requestTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterEach
    void stop() {
        client.close();
        api.close();
    }

    @Test
    void createSendsPortPublicAndTtlAndReadsTheToken() {
        api.json("POST /v1/sandboxes/demo/previews", 201, PRIVATE);

        Preview p = client.sandboxes().previews("demo").create(PreviewRequest.builder(3000).ttl(Duration.ofHours(2)).build());

        assertThat(new String(api.last().body(), StandardCharsets.UTF_8)).isEqualTo("{\"port\":3000,\"public\":false,\"ttlSeconds\":7200}");
        assertThat(p.isPublic()).isFalse();
        assertThat(p.token()).isEqualTo("tok");
        assertThat(p.linkWithToken()).isEqualTo("http://3000-sbx-1.localhost:7071/?stasis_preview_token=tok");
        assertThat(p.expiresAt()).isEqualTo(Instant.parse("2026-11-29T12:00:00Z"));

        client.sandboxes().previews("demo").create(8000);
        assertThat(new String(api.last().body(), StandardCharsets.UTF_8)).isEqualTo("{\"port\":8000,\"public\":false}");
    }

    @Test
    void listGetAndDelete() {
        api.json("GET /v1/sandboxes/demo/previews", 200, "{\"items\": [" + PUBLIC + "], \"nextCursor\": null}");
        api.json("GET /v1/sandboxes/demo/previews/prv_2", 200, PUBLIC);
        api.on("DELETE /v1/sandboxes/demo/previews/prv_2", (request, exchange) -> FakeApi.respond(exchange, 204, "text/plain", ""));
        var previews = client.sandboxes().previews("demo");

        assertThat(previews.list()).singleElement().satisfies(p -> {
            assertThat(p.isPublic()).isTrue();
            assertThat(p.token()).isNull();
            assertThat(p.linkWithToken()).isNull();
            assertThat(p.expiresAt()).isNull();
        });
        assertThat(previews.get("prv_2").port()).isEqualTo(8000);
        previews.delete("prv_2");
        assertThat(api.last().method()).isEqualTo("DELETE");
    }

    @Test
    void anUnknownPreviewIsNotFound() {
        api.json("GET /v1/sandboxes/demo/previews/prv_x", 404,
                "{\"error\": {\"code\": \"preview_not_found\", \"message\": \"no preview with id 'prv_x' in this sandbox\"}}");
        assertThatThrownBy(() -> client.sandboxes().previews("demo").get("prv_x"))
                .isInstanceOf(NotFoundException.class).hasMessageContaining("preview_not_found");
    }
}
