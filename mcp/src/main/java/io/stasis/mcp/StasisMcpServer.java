package io.stasis.mcp;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema.ServerCapabilities;
import io.modelcontextprotocol.common.McpTransportContext;
import io.stasis.sdk.StasisClient;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The Stasis MCP server over its two transports, with one set of tools ({@link StasisTools}) and
 * the sandbox file resources ({@link SandboxFileResources}):
 * <ul>
 *   <li>{@link #stdio}: one session on a pair of streams, every call with one client
 *       ({@code stasis mcp});</li>
 *   <li>{@link #streamableHttp}: a servlet speaking Streamable HTTP, each call with a client for
 *       the caller's bearer key (the service mounts it at {@code /mcp}).</li>
 * </ul>
 */
public final class StasisMcpServer {
    static final String NAME = "stasis";
    static final String VERSION = "0.1.0";
    /** Where {@link #streamableHttp} keeps the caller's API key in the transport context. */
    public static final String API_KEY = "stasis.apiKey";
    static final String INSTRUCTIONS = """
            Stasis runs persistent, isolated Linux sandboxes. Create one with sandbox_create (template 'base' \
            has python3 and bash; 'tiny' has busybox sh only), then pass its id as 'sandbox' to the other tools. \
            Run commands with sandbox_exec (they must end; the answer has exit code, stdout and stderr), start \
            servers and other long-running programs with process_start and read their output with process_output. \
            Files: file_write, file_read, file_list, file_stat, file_move, file_remove. Sandboxes keep their state \
            between calls and sleep when idle (they wake on the next call); delete them with sandbox_delete when \
            done. checkpoint_create and sandbox_fork copy a sandbox's whole state to try alternatives.""";

    private StasisMcpServer() {
    }

    /** A server on a pair of streams: stdio. {@link Stdio#awaitEnd()} returns once the input ends. */
    public static Stdio stdio(StasisClient client, InputStream in, OutputStream out) {
        var end = new CountDownLatch(1);
        var watched = new FilterInputStream(in) {
            @Override
            public int read() throws IOException {
                return ended(super.read());
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                try {
                    return ended(super.read(b, off, len));
                } catch (IOException e) {
                    end.countDown();
                    throw e;
                }
            }

            private int ended(int n) {
                if (n < 0) end.countDown();
                return n;
            }
        };
        var provider = new StdioServerTransportProvider(McpJsonDefaults.getMapper(), watched, out);
        return new Stdio(build(McpServer.sync(provider), ClientSource.of(client)), end);
    }

    /**
     * A Streamable HTTP server as a servlet answering at {@code endpoint} (e.g. {@code /mcp}). The
     * caller's key comes from {@code Authorization: Bearer} into the transport context; {@code clients}
     * turns it into the client of each call. Authenticate before the servlet is reached.
     */
    public static Http streamableHttp(String endpoint, ClientSource clients) {
        var provider = HttpServletStreamableServerTransportProvider.builder()
                .jsonMapper(McpJsonDefaults.getMapper())
                .mcpEndpoint(endpoint)
                .keepAliveInterval(Duration.ofSeconds(15))
                .contextExtractor(request -> McpTransportContext.create(Map.of(API_KEY, bearer(request.getHeader("Authorization")))))
                .build();
        return new Http(build(McpServer.sync(provider), clients), provider);
    }

    /** The key of an {@code Authorization: Bearer <key>} header, or "" without one. */
    static String bearer(String header) {
        if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) return "";
        return header.substring(7).strip();
    }

    private static McpSyncServer build(McpServer.SyncSpecification<?> spec, ClientSource clients) {
        return spec.serverInfo(NAME, VERSION)
                .instructions(INSTRUCTIONS)
                .capabilities(ServerCapabilities.builder().tools(false).resources(false, false).build())
                .uriTemplateManagerFactory(new PathTemplates())
                .tools(StasisTools.specifications(clients))
                .resourceTemplates(SandboxFileResources.specification(clients))
                .build();
    }

    /** A stdio server: runs until its input ends. */
    public record Stdio(McpSyncServer server, CountDownLatch end) implements AutoCloseable {
        /** Blocks until the client closes the input stream (or it fails). */
        public void awaitEnd() throws InterruptedException {
            end.await();
        }

        @Override
        public void close() {
            server.close();
        }
    }

    /** A Streamable HTTP server: mount {@link #servlet()} at its endpoint; close it when the service stops. */
    public record Http(McpSyncServer server, HttpServletStreamableServerTransportProvider servlet) implements AutoCloseable {
        @Override
        public void close() {
            server.closeGracefully();
        }
    }
}
