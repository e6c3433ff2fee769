package io.stasis.mcp;

import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.stasis.sdk.StasisClient;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * One {@link StasisClient} per API key, all on one HTTP client: the Streamable HTTP server's tool
 * calls go to the API with the key of the caller (from {@link StasisMcpServer#API_KEY}), so each
 * sees and may do exactly what its key may. Only keys the service has authenticated reach it.
 */
public final class KeyedClients implements ClientSource, AutoCloseable {
    private final Supplier<String> url;
    private final HttpClient http;
    private final Map<String, StasisClient> clients = new ConcurrentHashMap<>();

    /** {@code url}: the API's base URL, asked for when the first client is made (the port may be chosen late). */
    public KeyedClients(Supplier<String> url) {
        this.url = url;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10))
                .followRedirects(HttpClient.Redirect.NEVER).build();
    }

    @Override
    public StasisClient clientFor(McpSyncServerExchange exchange) {
        Object key = exchange.transportContext().get(StasisMcpServer.API_KEY);
        if (!(key instanceof String k) || k.isEmpty()) throw new IllegalStateException("no API key in this MCP request");
        return clients.computeIfAbsent(k, it -> StasisClient.builder().url(url.get()).apiKey(it).httpClient(http).build());
    }

    @Override
    public void close() {
        clients.values().forEach(StasisClient::close);
        clients.clear();
        http.close();
    }
}
