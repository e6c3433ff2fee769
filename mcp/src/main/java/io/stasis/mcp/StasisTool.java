package io.stasis.mcp;

import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import io.modelcontextprotocol.spec.McpSchema.ToolAnnotations;
import io.stasis.sdk.StasisClient;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * One MCP tool: its name, description and input schema, and the handler that maps it to SDK
 * calls. {@link #call} turns every failure into a tool error (see {@link ToolResult#failure}).
 */
record StasisTool(String name, String title, String description, Map<String, Object> inputSchema, Kind kind,
                  Handler handler) {
    /** What a call does to the sandboxes, for the client's confirmations (MCP tool annotations). */
    enum Kind {
        READ(true, false, true), CHANGE(false, false, false), IDEMPOTENT(false, false, true), DESTRUCTIVE(false, true, true);

        final boolean readOnly;
        final boolean destructive;
        final boolean idempotent;

        Kind(boolean readOnly, boolean destructive, boolean idempotent) {
            this.readOnly = readOnly;
            this.destructive = destructive;
            this.idempotent = idempotent;
        }
    }

    @FunctionalInterface
    interface Handler {
        ToolResult call(StasisClient client, ToolArguments arguments);
    }

    ToolResult call(Supplier<StasisClient> client, Map<String, Object> arguments) {
        try {
            var checked = new ToolArguments(name, arguments, propertyNames());
            return handler.call(client.get(), checked);
        } catch (RuntimeException e) {
            return ToolResult.failure(e);
        }
    }

    @SuppressWarnings("unchecked")
    Set<String> propertyNames() {
        return new TreeSet<>(((Map<String, Object>) inputSchema.get("properties")).keySet());
    }

    Tool tool() {
        var annotations = new ToolAnnotations(title, kind.readOnly, kind.destructive, kind.idempotent, false, null);
        return Tool.builder().name(name).title(title).description(description).inputSchema(inputSchema)
                .annotations(annotations).build();
    }

    SyncToolSpecification specification(ClientSource clients) {
        return SyncToolSpecification.builder().tool(tool())
                .callHandler((exchange, request) -> call(() -> clients.clientFor(exchange), request.arguments()).toCallToolResult())
                .build();
    }
}
