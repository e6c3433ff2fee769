package io.stasis.server.mcp;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.error.StasisException;
import io.stasis.mcp.KeyedClients;
import io.stasis.mcp.StasisMcpServer;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.error.ErrorBody;
import io.stasis.server.error.ErrorMapper;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.EnumSet;
import java.util.Objects;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MCP server over Streamable HTTP at {@value #PATH}, beside the REST API on its Jetty. Every
 * request needs {@code Authorization: Bearer <key>} like the API (401 with the API's error body
 * otherwise); the tools then call the API on this service's own port with the caller's key, so
 * each MCP client can do exactly what its key may.
 */
public final class McpEndpoint implements AutoCloseable {
    public static final String PATH = "/mcp";
    private static final Logger log = LoggerFactory.getLogger(McpEndpoint.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final BearerAuth auth;
    private volatile String apiUrl;
    private final KeyedClients clients;
    private final StasisMcpServer.Http server;

    public McpEndpoint(BearerAuth auth) {
        this.auth = auth;
        this.clients = new KeyedClients(() -> Objects.requireNonNull(apiUrl, "the API has not started"));
        this.server = StasisMcpServer.streamableHttp(PATH, clients);
    }

    /** Adds the endpoint to the API's servlet context (before the server starts). */
    public void mount(ServletContextHandler context) {
        var servlet = new ServletHolder("mcp", server.servlet());
        servlet.setAsyncSupported(true); // the transport streams answers as Server-Sent Events
        context.addServlet(servlet, PATH);
        var filter = new FilterHolder(new Authenticated());
        filter.setAsyncSupported(true);
        context.addFilter(filter, PATH, EnumSet.of(DispatcherType.REQUEST));
    }

    /** Where the tools reach the API once it listens: the bind address, or the loopback for a wildcard bind. */
    public void apiListensOn(String bind, int port) {
        String host = bind == null || bind.isBlank() || "0.0.0.0".equals(bind) || "::".equals(bind) ? "127.0.0.1"
                : bind.contains(":") ? "[" + bind + "]" : bind;
        this.apiUrl = "http://" + host + ":" + port;
    }

    @Override
    public void close() {
        try {
            server.close();
        } finally {
            clients.close();
        }
    }

    /** Checks the bearer key before the SDK's transport servlet sees the request. */
    private final class Authenticated extends HttpFilter {
        @Override
        protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws ServletException, IOException {
            try {
                auth.authenticate(request.getHeader("Authorization"));
            } catch (StasisException e) {
                log.atDebug().addKeyValue("remote", request.getRemoteAddr()).log("MCP request refused: " + e.getMessage());
                response.setStatus(ErrorMapper.status(e.code()));
                response.setHeader("WWW-Authenticate", "Bearer");
                response.setContentType("application/json");
                JSON.writeValue(response.getOutputStream(), ErrorBody.of(e));
                return;
            }
            chain.doFilter(request, response);
        }
    }
}
