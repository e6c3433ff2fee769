package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.ReadResourceRequest;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.TextResourceContents;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.stasis.cli.Main;
import io.stasis.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The MCP server against a real service, driven by the MCP Java SDK's own client over both
 * transports (Streamable HTTP at /mcp, and {@code stasis mcp} as a subprocess on stdio), and by the
 * official TypeScript SDK from npm in a scripted python session.
 */
@Tag("root")
class McpIT {
    @AutoClose
    private static ServiceFixture service;

    @BeforeAll
    static void start() throws IOException {
        service = ServiceFixture.start();
    }

    /** The two ways an agent host reaches the tools; every session test runs over each. */
    enum Transport {
        STREAMABLE_HTTP {
            @Override
            McpSyncClient connect() {
                var transport = HttpClientStreamableHttpTransport.builder(service.url).endpoint("/mcp")
                        .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + service.rootKey))
                        .build();
                return McpClient.sync(transport).requestTimeout(Duration.ofMinutes(2)).build();
            }
        },
        STDIO {
            @Override
            McpSyncClient connect() {
                // `stasis mcp` as an agent host starts it: a subprocess, the protocol on its stdin/stdout.
                Path java = Path.of(System.getProperty("java.home"), "bin", "java");
                var parameters = ServerParameters.builder(java.toString())
                        .args("-cp", System.getProperty("java.class.path"), Main.class.getName(), "mcp")
                        .env(Map.of("STASIS_URL", service.url, "STASIS_API_KEY", service.rootKey))
                        .build();
                var transport = new StdioClientTransport(parameters, McpJsonDefaults.getMapper());
                return McpClient.sync(transport).requestTimeout(Duration.ofMinutes(2))
                        .initializationTimeout(Duration.ofMinutes(1)).build();
            }
        };

        abstract McpSyncClient connect();
    }

    private static CallToolResult call(McpSyncClient client, String tool, Map<String, Object> arguments) {
        return client.callTool(new CallToolRequest(tool, arguments));
    }

    private static String text(CallToolResult result) {
        return ((TextContent) result.content().getFirst()).text();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> json(CallToolResult result) {
        return (Map<String, Object>) result.structuredContent();
    }

    private static CallToolResult ok(CallToolResult result) {
        assertThat(result.isError()).as(text(result)).isFalse();
        return result;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Transport.class)
    void aSessionCreatesRunsWritesReadsAndDeletes(Transport transport) {
        try (McpSyncClient client = transport.connect()) {
            var init = client.initialize();
            assertThat(init.serverInfo().name()).isEqualTo("stasis");
            assertThat(init.instructions()).contains("sandbox_create");
            assertThat(client.listTools().tools()).extracting(Tool::name)
                    .contains("sandbox_create", "sandbox_exec", "process_start", "process_output", "file_read", "network_set");
            assertThat(client.listResourceTemplates().resourceTemplates()).singleElement()
                    .satisfies(t -> assertThat(t.uriTemplate()).isEqualTo("stasis://sandboxes/{id}/files/{+path}"));

            var created = ok(call(client, "sandbox_create", Map.of("template", "tiny", "name", "mcp-" + transport.name().toLowerCase().replace('_', '-'))));
            String id = (String) json(created).get("id");
            assertThat(text(created)).startsWith("created " + id);
            try {
                var exec = ok(call(client, "sandbox_exec", Map.of("sandbox", id, "command", "echo hello $WHO; echo warn >&2; exit 3",
                        "env", Map.of("WHO", "mcp"))));
                assertThat(text(exec)).startsWith("exit code 3").contains("--- stdout ---\nhello mcp\n").contains("--- stderr ---\nwarn\n");

                var timedOut = ok(call(client, "sandbox_exec", Map.of("sandbox", id, "argv", List.of("sleep", "30"), "timeoutSeconds", 1)));
                assertThat(text(timedOut)).startsWith("timed out and killed");

                ok(call(client, "file_write", Map.of("sandbox", id, "path", "/root/dir/hello.sh", "content", "echo from a file\n", "mode", "0755")));
                assertThat(text(ok(call(client, "file_read", Map.of("sandbox", id, "path", "/root/dir/hello.sh"))))).isEqualTo("echo from a file\n");
                assertThat(text(ok(call(client, "file_list", Map.of("sandbox", id, "path", "/root/dir"))))).contains("/root/dir/hello.sh").contains("0755");
                assertThat(text(ok(call(client, "sandbox_exec", Map.of("sandbox", id, "argv", List.of("/root/dir/hello.sh"))))))
                        .contains("from a file");
                ok(call(client, "file_move", Map.of("sandbox", id, "from", "/root/dir/hello.sh", "to", "/root/hello.sh")));
                var resource = client.readResource(new ReadResourceRequest("stasis://sandboxes/" + id + "/files/root/hello.sh"));
                assertThat(((TextResourceContents) resource.contents().getFirst()).text()).isEqualTo("echo from a file\n");
                ok(call(client, "file_remove", Map.of("sandbox", id, "path", "/root/dir")));
                var gone = call(client, "file_stat", Map.of("sandbox", id, "path", "/root/dir"));
                assertThat(gone.isError()).isTrue();
                assertThat(text(gone)).startsWith("error file_not_found: ");

                var started = ok(call(client, "process_start", Map.of("sandbox", id, "command", "read line; echo got $line; sleep 600",
                        "stdin", true, "tag", "reader")));
                long pid = ((Number) json(started).get("pid")).longValue();
                ok(call(client, "process_stdin", Map.of("sandbox", id, "pid", pid, "text", "ping\n")));
                Await.until("the process answers its input", Duration.ofSeconds(20),
                        () -> text(ok(call(client, "process_output", Map.of("sandbox", id, "pid", pid)))).contains("got ping"));
                var later = ok(call(client, "process_output", Map.of("sandbox", id, "pid", pid, "offset", 9)));
                assertThat(json(later)).containsEntry("stdout", "").containsEntry("stdoutOffset", 9);
                ok(call(client, "process_signal", Map.of("sandbox", id, "pid", pid, "signal", "KILL")));
                assertThat(text(ok(call(client, "process_output", Map.of("sandbox", id, "pid", pid, "waitSeconds", 20)))))
                        .contains("exited with code 137 (signal KILL)");

                assertThat(text(ok(call(client, "sandbox_pause", Map.of("sandbox", id))))).contains(": paused");
                assertThat(text(ok(call(client, "sandbox_resume", Map.of("sandbox", id))))).contains(": running");
            } finally {
                ok(call(client, "sandbox_delete", Map.of("sandbox", id)));
            }
            var missing = call(client, "sandbox_get", Map.of("sandbox", id));
            assertThat(missing.isError()).isTrue();
            assertThat(text(missing)).startsWith("error sandbox_not_found: ");
        }
    }

    @Test
    void aModelBuildsATemplateUsesItAndDeletesIt() {
        try (McpSyncClient client = Transport.STREAMABLE_HTTP.connect()) {
            client.initialize();
            var built = ok(call(client, "template_build", Map.of("name", "mcp-tpl", "from", "tiny",
                    "run", List.of("echo made by a model > /made"), "env", Map.of("WHO", "mcp"))));
            assertThat(text(built)).contains("template mcp-tpl version 1 is ready");
            assertThat(text(ok(call(client, "template_list", Map.of())))).contains("mcp-tpl  ready");
            var failed = call(client, "template_build", Map.of("name", "mcp-bad", "dockerfile", "FROM tiny\nRUN echo nope >&2; exit 4\n"));
            assertThat(failed.isError()).isTrue();
            assertThat(text(failed)).contains("failed at step 1", "exit code 4", "nope");
            var created = ok(call(client, "sandbox_create", Map.of("template", "mcp-tpl")));
            String id = (String) json(created).get("id");
            assertThat(text(ok(call(client, "sandbox_exec", Map.of("sandbox", id, "command", "cat /made; echo $WHO")))))
                    .contains("made by a model\nmcp");
            ok(call(client, "sandbox_delete", Map.of("sandbox", id)));
            assertThat(text(ok(call(client, "template_delete", Map.of("name", "mcp-tpl"))))).isEqualTo("deleted template mcp-tpl");
        }
    }

    @Test
    void aModelSharesAVolumeBetweenSandboxesAndHandsOutAScopedToken() {
        try (McpSyncClient client = Transport.STREAMABLE_HTTP.connect()) {
            client.initialize();
            assertThat(text(ok(call(client, "volume_create", Map.of("name", "mcp-vol", "sizeMb", 64))))).startsWith("created volume mcp-vol");
            String writer = (String) json(ok(call(client, "sandbox_create", Map.of("template", "tiny", "volumes", List.of("mcp-vol:/shared"))))).get("id");
            String reader = (String) json(ok(call(client, "sandbox_create", Map.of("template", "tiny", "volumes", List.of("mcp-vol:/shared:ro"))))).get("id");
            ok(call(client, "sandbox_exec", Map.of("sandbox", writer, "command", "echo shared > /shared/note")));
            assertThat(text(ok(call(client, "sandbox_exec", Map.of("sandbox", reader, "command", "cat /shared/note"))))).contains("shared");
            assertThat(text(ok(call(client, "volume_list", Map.of())))).contains("mcp-vol", "mounted by 2 sandbox(es)");
            var token = ok(call(client, "token_create", Map.of("sandbox", reader, "permissions", List.of("exec"), "name", "helper")));
            String tokenId = (String) json(token).get("id");
            assertThat(text(token)).contains("exec", "secret (shown once): ");
            assertThat(text(ok(call(client, "token_list", Map.of())))).contains(tokenId);
            assertThat(text(ok(call(client, "token_revoke", Map.of("token", tokenId))))).isEqualTo("revoked token " + tokenId);
            ok(call(client, "sandbox_delete", Map.of("sandbox", writer)));
            ok(call(client, "sandbox_delete", Map.of("sandbox", reader)));
            assertThat(text(ok(call(client, "volume_delete", Map.of("volume", "mcp-vol"))))).isEqualTo("deleted volume mcp-vol");
        }
    }

    @Test
    void theHttpEndpointNeedsAnApiKey() throws Exception {
        String initialize = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
                + "\"capabilities\":{},\"clientInfo\":{\"name\":\"curl\",\"version\":\"1\"}}}";
        try (var http = HttpClient.newHttpClient()) {
            for (String authorization : new String[] {null, "Bearer sk_wrong", "Basic eDp5"}) {
                var request = HttpRequest.newBuilder(URI.create(service.url + "/mcp")).header("Content-Type", "application/json")
                        .header("Accept", "application/json, text/event-stream").POST(HttpRequest.BodyPublishers.ofString(initialize));
                if (authorization != null) request.header("Authorization", authorization);
                HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).as(authorization).isEqualTo(401);
                assertThat(response.body()).contains("\"code\":\"unauthenticated\"");
            }
        }
    }

    /** A client no one on this project wrote: the official TypeScript SDK, installed from npm into target/. */
    @Test
    void theTypeScriptSdkRunsAPythonSession() throws Exception {
        // base has python3; its first build on a fresh machine (debootstrap) takes minutes, later ones read the cache
        var session = NodeScripts.runSession("mcp-session", Map.of("STASIS_MCP_URL", service.url + "/mcp", "STASIS_API_KEY", service.rootKey,
                "STASIS_TEMPLATE", "base"), Duration.ofMinutes(20));
        assertThat(session.code()).as(session.output()).isZero();
        assertThat(session.output()).contains("sandbox_exec: exit code 0").contains("session ok");
        assertThat(service.client.sandboxes().list().items()).isEmpty();
    }
}
