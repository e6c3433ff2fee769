package io.stasis.server.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.error.StasisException;
import io.stasis.mcp.KeyedClients;
import io.stasis.mcp.StasisMcpServer;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.error.ErrorBody;
import io.stasis.server.error.ErrorMapper;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
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
    private final KeyedClients clients;
    private final StasisMcpServer.Http server;

    /** @param apiUrl where this service's API answers, once it listens */
    public McpEndpoint(BearerAuth auth, Supplier<String> apiUrl) {
        this.auth = auth;
        this.clients = new KeyedClients(apiUrl);
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
            if (!"POST".equals(request.getMethod())) {
                chain.doFilter(request, response);
                return;
            }
            // The SDK's transport fails with a 500 on a message that is JSON but not a JSON-RPC
            // object (null, a number, a string): such a body is the client's mistake, answered here.
            byte[] body = request.getInputStream().readNBytes(MAX_MESSAGE_BYTES + 1);
            String problem = body.length > MAX_MESSAGE_BYTES ? "the message is larger than " + MAX_MESSAGE_BYTES + " bytes"
                    : notAMessage(body);
            if (problem != null) {
                response.setStatus(body.length > MAX_MESSAGE_BYTES ? 413 : 400);
                response.setContentType("application/json");
                JSON.writeValue(response.getOutputStream(), Map.of("jsonrpc", "2.0",
                        "error", Map.of("code", -32600, "message", "Invalid Request: " + problem)));
                return;
            }
            chain.doFilter(new Buffered(request, body), response);
        }
    }

    /** Why the body is not a JSON-RPC message or batch (an object, or an array of objects), or null if it is one; text that is not JSON is left to the SDK. */
    private static String notAMessage(byte[] body) {
        JsonNode node;
        try {
            node = JSON.readTree(body);
        } catch (IOException e) {
            return null;
        }
        if (node == null || node.isMissingNode()) return "the body is empty";
        if (node.isObject()) return null;
        if (node.isArray() && !node.isEmpty()) {
            for (var element : node) if (!element.isObject()) return "a batch holds objects only";
            return null;
        }
        return "a message is a JSON object, not " + node.getNodeType().name().toLowerCase(Locale.ROOT);
    }

    private static final int MAX_MESSAGE_BYTES = 4 << 20;

    /** The request with its body read already, for the SDK to read again. */
    private static final class Buffered extends HttpServletRequestWrapper {
        private final byte[] body;

        Buffered(HttpServletRequest request, byte[] body) {
            super(request);
            this.body = body;
        }

        @Override
        public ServletInputStream getInputStream() {
            var in = new ByteArrayInputStream(body);
            return new ServletInputStream() {
                @Override
                public int read() {
                    return in.read();
                }

                @Override
                public int read(byte[] b, int off, int len) {
                    return in.read(b, off, len);
                }

                @Override
                public boolean isFinished() {
                    return in.available() == 0;
                }

                @Override
                public boolean isReady() {
                    return true;
                }

                @Override
                public void setReadListener(ReadListener listener) {
                    throw new UnsupportedOperationException("the body is read already");
                }
            };
        }

        @Override
        public BufferedReader getReader() {
            return new BufferedReader(new InputStreamReader(new ByteArrayInputStream(body), charset(getCharacterEncoding())));
        }

        private static Charset charset(String name) {
            try {
                return name == null ? StandardCharsets.UTF_8 : Charset.forName(name);
            } catch (IllegalArgumentException e) { // unknown or malformed: JSON is UTF-8
                return StandardCharsets.UTF_8;
            }
        }

        @Override
        public int getContentLength() {
            return body.length;
        }

        @Override
        public long getContentLengthLong() {
            return body.length;
        }
    }
}
