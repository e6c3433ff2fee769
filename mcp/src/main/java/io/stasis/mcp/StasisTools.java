package io.stasis.mcp;

import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import java.util.ArrayList;
import java.util.List;

/**
 * The tools of the Stasis MCP server, the same over every transport: each a name, a description
 * and input schema written for an LLM, and a handler calling the REST API through the Java SDK.
 */
public final class StasisTools {
    private StasisTools() {
    }

    /** Every tool, in the order clients list them. */
    static List<StasisTool> all() {
        var tools = new ArrayList<StasisTool>();
        tools.addAll(SandboxTools.all());
        tools.addAll(ProcessTools.all());
        tools.addAll(FileTools.all());
        tools.addAll(TemplateTools.all());
        tools.addAll(VolumeTools.all());
        tools.addAll(AccessTools.all());
        return List.copyOf(tools);
    }

    /** The tool specifications of the MCP SDK, each call running with the client {@code clients} gives. */
    public static List<SyncToolSpecification> specifications(ClientSource clients) {
        return all().stream().map(tool -> tool.specification(clients)).toList();
    }
}
