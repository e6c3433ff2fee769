package io.stasis.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** {@code stasis secret set|ls|rm} against a fake server: values go in once and never come out. */
class SecretCommandsTest {
    private static final String CREATED = """
            {"name": "EXAMPLE_KEY", "createdAt": "2026-11-29T10:00:00Z"}""";

    @AutoClose
    private final FakeServer server = FakeServer.start();
    private final CliRunner cli = new CliRunner(server);

    @Test
    void setReadsTheValueFromStdinWithoutItsTrailingNewline() {
        server.json("POST /v1/secrets", 201, CREATED);
        assertThat(cli.runWithInput("s3cr3t-value\n", "secret", "set", "EXAMPLE_KEY")).isZero();
        assertThat(server.requests("POST /v1/secrets").getLast().text())
                .contains("\"name\":\"EXAMPLE_KEY\"").contains("\"value\":\"s3cr3t-value\"");
        assertThat(cli.out()).isEqualTo("EXAMPLE_KEY\n").doesNotContain("s3cr3t");

        assertThat(cli.run("secret", "set", "EXAMPLE_KEY", "--value", "other")).isZero();
        assertThat(server.requests("POST /v1/secrets").getLast().text()).contains("\"value\":\"other\"");
    }

    @Test
    void lsShowsNamesAndRmGoesOnPastAFailure() {
        server.json("GET /v1/secrets", 200, "{\"items\": [" + CREATED + "], \"nextCursor\": null}");
        server.json("DELETE /v1/secrets/EXAMPLE_KEY", 204, "");
        server.json("DELETE /v1/secrets/MISSING", 404, FakeServer.error("secret_not_found", "no secret named 'MISSING'"));

        assertThat(cli.run("secret", "ls")).isZero();
        assertThat(cli.out()).startsWith("NAME").contains("EXAMPLE_KEY");

        assertThat(cli.run("secret", "rm", "MISSING", "EXAMPLE_KEY")).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(cli.out()).contains("EXAMPLE_KEY");
        assertThat(cli.err()).contains("MISSING");
        assertThat(server.requests("DELETE /v1/secrets/EXAMPLE_KEY")).hasSize(1);
    }
}
