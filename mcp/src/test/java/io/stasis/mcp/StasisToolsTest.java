package io.stasis.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** The tools' schemas, and their handlers against documented API answers through the real SDK. */
class StasisToolsTest {
    static final String SANDBOX = """
            {"id": "sbx_1", "name": "demo", "template": "tiny", "state": "running", "stateReason": null,
             "hibernation": null, "createdAt": "2026-11-29T10:00:00Z", "resources": {"cpus": 1.0, "memoryMb": 1024, "pids": 512},
             "env": {}, "metadata": {}, "parentId": null, "checkpointId": null, "lifecycle": null}""";
    static final String PROCESS = """
            {"id": "prc_1", "pid": 7, "cmd": ["sh", "-c", "echo hi"], "cwd": null, "tag": null,
             "startedAt": "2026-11-29T10:00:00Z", "status": "exited", "exitCode": 0, "signal": null,
             "keepAlive": false, "keepAliveUntil": null, "stdoutBytes": 10, "stderrBytes": 0, "stdin": false, "pty": false}""";

    @AutoClose
    final CannedApi api = new CannedApi();

    private CallToolResult call(String tool, Map<String, Object> arguments) {
        StasisTool found = StasisTools.all().stream().filter(t -> t.name().equals(tool)).findFirst().orElseThrow();
        return found.call(() -> api.client, arguments).toCallToolResult();
    }

    private static String text(CallToolResult result) {
        return ((TextContent) result.content().getFirst()).text();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> error(CallToolResult result) {
        return (Map<String, Object>) ((Map<String, Object>) result.structuredContent()).get("error");
    }

    @Test
    void theToolSetIsCompleteAndEverySchemaIsStrictAndDescribed() {
        assertThat(StasisTools.all()).extracting(StasisTool::name).contains("sandbox_create", "sandbox_list",
                "sandbox_get", "sandbox_delete", "sandbox_exec", "process_start", "process_output", "process_stdin",
                "process_signal", "file_read", "file_write", "file_list", "file_stat", "file_move", "file_remove",
                "sandbox_pause", "sandbox_hibernate", "sandbox_resume", "checkpoint_create", "sandbox_fork",
                "preview_create", "network_set", "volume_create", "volume_list", "volume_snapshot", "volume_delete", "token_create",
                "token_list", "token_revoke", "tenant_list", "tenant_create", "tenant_quota").doesNotHaveDuplicates();
        for (StasisTool tool : StasisTools.all()) {
            Map<String, Object> schema = tool.inputSchema();
            assertThat(schema).containsEntry("type", "object").containsEntry("additionalProperties", false);
            assertThat(tool.description()).as(tool.name()).hasSizeGreaterThan(40);
            @SuppressWarnings("unchecked")
            var properties = (Map<String, Map<String, Object>>) schema.get("properties");
            properties.forEach((name, property) -> assertThat(property.get("description")).as(tool.name() + "." + name)
                    .asString().isNotBlank());
            @SuppressWarnings("unchecked")
            var required = (List<String>) schema.getOrDefault("required", List.of());
            assertThat(properties.keySet()).as(tool.name()).containsAll(required);
            assertThat(tool.tool().annotations().title()).isEqualTo(tool.title());
        }
    }

    @Test
    void execRunsAShellCommandLineAndAnswersExitCodeAndOutput() {
        api.json("POST /v1/sandboxes/demo/exec", 200, """
                {"exitCode": 3, "signal": null, "stdout": "hi\\n", "stderr": "oops\\n", "encoding": "utf-8",
                 "stdoutTruncated": false, "stderrTruncated": false, "timedOut": false, "durationMs": 12}""");
        CallToolResult result = call("sandbox_exec", Map.of("sandbox", "demo", "command", "echo hi; exit 3",
                "timeoutSeconds", 5));
        assertThat(api.last().text()).contains("\"cmd\":[\"sh\",\"-c\",\"echo hi; exit 3\"]").contains("\"timeoutMs\":5000");
        assertThat(result.isError()).isFalse();
        assertThat(text(result)).startsWith("exit code 3, 12 ms\n--- stdout ---\nhi\n\n--- stderr ---\noops\n");
        assertThat((Map<String, Object>) result.structuredContent()).containsEntry("exitCode", 3).containsEntry("stdout", "hi\n");
    }

    @Test
    void execBoundsItsOutputKeepingTheStartAndTheEnd() {
        String longOutput = "a".repeat(1000) + "b".repeat(50_000) + "THE END";
        api.json("POST /v1/sandboxes/demo/exec", 200, "{\"exitCode\": 0, \"stdout\": \"" + longOutput + "\", \"stderr\": \"\","
                + " \"encoding\": \"utf-8\", \"stdoutTruncated\": false, \"stderrTruncated\": false, \"timedOut\": false, \"durationMs\": 1}");
        CallToolResult result = call("sandbox_exec", Map.of("sandbox", "demo", "argv", List.of("cat", "big"), "maxOutputChars", 1000));
        assertThat(api.last().text()).contains("\"cmd\":[\"cat\",\"big\"]");
        String text = text(result);
        assertThat(text).startsWith("exit code 0").contains("characters omitted").endsWith("THE END");
        assertThat(text.length()).isLessThan(1300);
        assertThat((Map<String, Object>) result.structuredContent()).containsEntry("stdoutTruncated", true);
    }

    @Test
    void apiErrorsAreToolErrorsWithTheApisCodeAndMessage() {
        api.json("GET /v1/sandboxes/nope", 404, CannedApi.error("sandbox_not_found", "no sandbox with id or name 'nope'"));
        CallToolResult result = call("sandbox_get", Map.of("sandbox", "nope"));
        assertThat(result.isError()).isTrue();
        assertThat(text(result)).isEqualTo("error sandbox_not_found: no sandbox with id or name 'nope'");
        assertThat(error(result)).containsEntry("code", "sandbox_not_found").containsEntry("status", 404);
    }

    @Test
    void badArgumentsAreToolErrorsNamingTheArgument() {
        CallToolResult both = call("sandbox_exec", Map.of("sandbox", "demo", "command", "ls", "argv", List.of("ls")));
        assertThat(both.isError()).isTrue();
        assertThat(text(both)).contains("invalid_arguments").contains("not both");
        assertThat(text(call("sandbox_exec", Map.of("sandbox", "demo", "timeoutSeconds", 0, "command", "ls"))))
                .contains("'timeoutSeconds' must be from 1 to 86400");
        assertThat(text(call("file_stat", Map.of("sandbox", "demo", "path", "/x", "follow", true))))
                .contains("unknown argument 'follow'");
        assertThat(api.calls).isEmpty();
    }

    @Test
    void createAnswersTheSandboxAsTextAndJson() {
        api.json("POST /v1/sandboxes", 201, SANDBOX);
        CallToolResult result = call("sandbox_create", Map.of("template", "tiny", "name", "demo", "memoryMb", 256,
                "allowInternet", true, "volumes", List.of("datasets:/data:ro", "scratch:/work")));
        assertThat(api.last().text()).contains("\"template\":\"tiny\"").contains("\"memoryMb\":256").contains("\"default\":\"allow\"")
                .contains("{\"volume\":\"datasets\",\"path\":\"/data\",\"readOnly\":true}")
                .contains("{\"volume\":\"scratch\",\"path\":\"/work\",\"readOnly\":false}");
        assertThat(text(call("sandbox_create", Map.of("volumes", List.of("no-path"))))).contains("'VOLUME:/path'");
        assertThat(text(result)).startsWith("created sbx_1 \"demo\": running, template tiny");
        assertThat((Map<String, Object>) result.structuredContent()).containsEntry("id", "sbx_1");
    }

    @Test
    void volumesAreMadeListedSnapshottedAndDeleted() {
        String volume = "{\"id\": \"vol_1\", \"name\": \"datasets\", \"sizeMb\": 512, \"createdAt\": \"2026-11-29T10:00:00Z\","
                + " \"origin\": null, \"mountedBy\": []}";
        api.json("POST /v1/volumes", 201, volume);
        CallToolResult created = call("volume_create", Map.of("name", "datasets", "sizeMb", 512));
        assertThat(api.last().text()).contains("\"name\":\"datasets\"").contains("\"sizeMb\":512");
        assertThat(text(created)).isEqualTo("created volume datasets (vol_1, 512 MB)");
        api.json("GET /v1/volumes", 200, "{\"items\": [" + volume + "], \"nextCursor\": null}");
        assertThat(text(call("volume_list", Map.of()))).isEqualTo("datasets (vol_1, 512 MB)");
        api.json("DELETE /v1/volumes/datasets", 204, "");
        assertThat(text(call("volume_delete", Map.of("volume", "datasets", "force", true)))).isEqualTo("deleted volume datasets");
        assertThat(api.last().query()).contains("force=true");
    }

    @Test
    void aTokenIsIssuedForOneSandboxWithItsPermissionsAndItsSecretShownOnce() {
        api.json("POST /v1/tokens", 201, "{\"id\": \"tok_1\", \"name\": \"helper\", \"scope\": {\"sandbox\": \"demo\"},"
                + " \"permissions\": [\"exec\", \"files:read\"], \"createdAt\": \"2026-11-29T10:00:00Z\","
                + " \"expiresAt\": \"2026-11-29T12:00:00Z\", \"token\": \"st_secret\"}");
        CallToolResult issued = call("token_create", Map.of("sandbox", "demo", "permissions", List.of("exec", "files:read"),
                "ttlSeconds", 7200, "name", "helper"));
        assertThat(api.last().text()).contains("\"sandbox\":\"demo\"").contains("\"permissions\":[\"exec\",\"files:read\"]")
                .contains("\"ttlSeconds\":7200");
        assertThat(text(issued)).contains("tok_1 'helper': sandbox demo, exec files:read").contains("secret (shown once): st_secret");
        assertThat(text(call("token_create", Map.of("sandbox", "demo", "volume", "v", "permissions", List.of("exec")))))
                .contains("one of them");
    }

    @Test
    void aTenantIsMadeWithAQuotaAndItsFirstKey() {
        String tenant = "{\"id\": \"ten_1\", \"name\": \"acme\", \"quota\": {\"runningSandboxes\": 5, \"requestsPerSecond\": 20},"
                + " \"usage\": {\"runningSandboxes\": 0, \"memoryMb\": 0, \"diskMb\": 0}, \"createdAt\": \"2026-11-29T10:00:00Z\"}";
        api.json("POST /v1/tenants", 201, tenant);
        api.json("POST /v1/tenants/ten_1/keys", 201, "{\"id\": \"key_1\", \"tenantId\": \"ten_1\", \"root\": false,"
                + " \"createdAt\": \"2026-11-29T10:00:00Z\", \"secret\": \"sk_secret\"}");
        CallToolResult created = call("tenant_create", Map.of("name", "acme", "runningSandboxes", 5, "requestsPerSecond", 20));
        assertThat(api.calls.get(api.calls.size() - 2).text()).contains("\"runningSandboxes\":5").contains("\"requestsPerSecond\":20");
        assertThat(text(created)).contains("ten_1 acme: 0/5 running").contains("API key (shown once): sk_secret");
    }

    @Test
    void processOutputReadsFromOffsetsAndSaysWhereToContinue() {
        api.json("GET /v1/sandboxes/demo/processes/7", 200, PROCESS);
        api.json("GET /v1/sandboxes/demo/processes/7/output", 200, "{\"stdout\": \"héllo world\", \"stdoutStart\": 4,"
                + " \"stdoutOffset\": 16, \"stderr\": \"\", \"stderrStart\": 0, \"stderrOffset\": 0, \"encoding\": \"utf-8\","
                + " \"process\": " + PROCESS + "}");
        CallToolResult result = call("process_output", Map.of("sandbox", "demo", "pid", 7, "offset", 4, "maxBytes", 100));
        assertThat(api.last().query()).contains("offset=4");
        assertThat(text(result)).contains("exited with code 0").contains("--- stdout bytes 4..16 ---\nhéllo world\n")
                .contains("next offset=16, stderrOffset=0");

        // a cut inside "é" (2 bytes) moves back to the character's start
        api.json("GET /v1/sandboxes/demo/processes/7/output", 200, "{\"stdout\": \"" + "h".repeat(99) + "éllo\","
                + " \"stdoutStart\": 4, \"stdoutOffset\": 109, \"stderr\": \"\", \"stderrStart\": 0, \"stderrOffset\": 0,"
                + " \"encoding\": \"utf-8\", \"process\": " + PROCESS + "}");
        CallToolResult cut = call("process_output", Map.of("sandbox", "demo", "pid", 7, "offset", 4, "maxBytes", 100));
        assertThat(text(cut)).contains("--- stdout bytes 4..103 (of 109) ---\n" + "h".repeat(99) + "\n")
                .contains("call again with offset=103");
        assertThat((Map<String, Object>) cut.structuredContent()).containsEntry("stdoutOffset", 103L).containsEntry("more", true);
    }

    @Test
    void filesAreReadAsTextOrBase64AndWrittenFromEither() {
        api.bytes("GET /v1/sandboxes/demo/files", "print('hi')\n".getBytes(StandardCharsets.UTF_8));
        CallToolResult text = call("file_read", Map.of("sandbox", "demo", "path", "/root/a.py"));
        assertThat(text(text)).isEqualTo("print('hi')\n");
        assertThat(api.last().query()).isEqualTo("path=%2Froot%2Fa.py");

        api.bytes("GET /v1/sandboxes/demo/files", new byte[] {(byte) 0xff, 0, 1});
        CallToolResult binary = call("file_read", Map.of("sandbox", "demo", "path", "/bin/x"));
        assertThat(text(binary)).contains("is not UTF-8 text").endsWith("/wAB");

        api.json("PUT /v1/sandboxes/demo/files", 200, "{\"path\": \"/root/x\", \"name\": \"x\", \"type\": \"file\", \"size\": 3,"
                + " \"mode\": \"0755\", \"modifiedAt\": \"2026-11-29T10:00:00Z\", \"symlinkTarget\": null}");
        CallToolResult written = call("file_write", Map.of("sandbox", "demo", "path", "/root/x", "content", "/wAB",
                "encoding", "base64", "mode", "0755"));
        assertThat(api.last().body()).containsExactly(0xff, 0, 1);
        assertThat(api.last().query()).contains("mode=0755");
        assertThat(text(written)).isEqualTo("wrote 3 bytes to /root/x (mode 0755)");
    }

    @Test
    void fileResourcesNameTheSandboxAndThePath() {
        api.bytes("GET /v1/sandboxes/sbx_1/files", "hello".getBytes(StandardCharsets.UTF_8));
        var result = SandboxFileResources.read(api.client, "stasis://sandboxes/sbx_1/files/root/dir/a%20b.txt");
        assertThat(api.last().query()).isEqualTo("path=%2Froot%2Fdir%2Fa%20b.txt");
        assertThat(result.contents()).singleElement().satisfies(c -> assertThat(
                ((McpSchema.TextResourceContents) c).text()).isEqualTo("hello"));

        var template = new PathTemplates().create(SandboxFileResources.TEMPLATE);
        assertThat(template.matches("stasis://sandboxes/sbx_1/files/root/a/b.py")).isTrue();
        assertThat(template.matches("stasis://sandboxes/a/b/files/x")).isFalse();
        assertThat(template.extractVariableValues("stasis://sandboxes/demo/files/root/a/b.py"))
                .containsEntry("id", "demo").containsEntry("path", "root/a/b.py");
    }
}
