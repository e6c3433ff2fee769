package io.stasis.cli;

import io.stasis.mcp.StasisMcpServer;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/**
 * {@code stasis mcp}: a Model Context Protocol server on stdin/stdout for local agent hosts. Stdout
 * carries only the protocol; messages go to stderr.
 */
@Command(name = "mcp", mixinStandardHelpOptions = true,
        description = {"Serve the Stasis tools over the Model Context Protocol on stdin/stdout, for agent hosts "
                + "(Claude Desktop, IDEs, agent frameworks) that start MCP servers as subprocesses.",
                "Uses --url/--api-key (or STASIS_URL, STASIS_API_KEY) like every command; runs until stdin ends."},
        footerHeading = "%nAgent host configuration:%n",
        footer = {"  {\"mcpServers\": {\"stasis\": {\"command\": \"stasis\", \"args\": [\"mcp\"],",
                "    \"env\": {\"STASIS_URL\": \"http://127.0.0.1:7070\", \"STASIS_API_KEY\": \"sk_...\"}}}}"})
final class McpCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Override
    public Integer call() throws InterruptedException {
        root.io().requireLocal("an MCP server speaks on this process's stdin and stdout until it ends");
        var client = root.client();
        root.io().err().println("stasis mcp: serving " + client.url() + " on stdin/stdout");
        try (var server = StasisMcpServer.stdio(client, root.io().in(), root.io().out())) {
            server.awaitEnd();
        }
        return ExitCodes.OK;
    }
}
