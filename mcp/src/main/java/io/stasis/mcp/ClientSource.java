package io.stasis.mcp;

import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.stasis.sdk.StasisClient;

/**
 * The {@link StasisClient} a tool call runs with: over stdio the one client of the process, over
 * HTTP one for the caller's API key (so the API's permissions apply to every call).
 */
@FunctionalInterface
public interface ClientSource {
    StasisClient clientFor(McpSyncServerExchange exchange);

    /** Always the same client. */
    static ClientSource of(StasisClient client) {
        return exchange -> client;
    }
}
