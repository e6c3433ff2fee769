package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Secrets against the fake API: set sends the value once, list and delete deal in names only. */
class SecretsTest {
    @AutoClose
    private final FakeApi api = FakeApi.start();
    @AutoClose
    private final StasisClient client = api.client();

    @Test
    void setSendsNameAndValueAndReturnsNoValue() {
        api.json("POST /v1/secrets", 201, """
                {"name": "EXAMPLE_KEY", "createdAt": "2026-11-29T10:00:00Z"}""");

        var info = client.secrets().set("EXAMPLE_KEY", "s3cr3t-value");

        assertThat(api.last().bodyText()).contains("\"name\":\"EXAMPLE_KEY\"").contains("\"value\":\"s3cr3t-value\"");
        assertThat(info).isEqualTo(new SecretInfo("EXAMPLE_KEY", Instant.parse("2026-11-29T10:00:00Z")));
        assertThat(info.toString()).doesNotContain("s3cr3t");
    }

    @Test
    void listAndDeleteDealInNames() {
        api.json("GET /v1/secrets", 200, """
                {"items": [{"name": "A", "createdAt": "2026-11-29T10:00:00Z"}, {"name": "B", "createdAt": "2026-11-29T10:00:01Z"}],
                 "nextCursor": null}""");
        api.json("DELETE /v1/secrets/A", 204, "");
        api.json("DELETE /v1/secrets/MISSING", 404, """
                {"error": {"code": "secret_not_found", "message": "no secret named 'MISSING'", "details": {}}}""");

        assertThat(client.secrets().list()).extracting(SecretInfo::name).containsExactly("A", "B");
        client.secrets().delete("A");
        assertThat(api.last().method()).isEqualTo("DELETE");
        assertThatThrownBy(() -> client.secrets().delete("MISSING")).isInstanceOf(NotFoundException.class)
                .hasMessageContaining("MISSING");
    }
}
