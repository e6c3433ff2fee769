package io.stasis.server.http;

import io.javalin.websocket.WsContext;
import io.stasis.core.node.Node;
import io.stasis.server.auth.BearerAuth;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A terminal whose sandbox is on another node: the same socket opened at that node (the caller's
 * credentials and query, {@link NodeForwarder#FORWARDED_BY} naming this node), and every frame
 * relayed both ways as it comes, whole (fragments are joined), until either side closes; the other
 * side is then closed with the same code.
 */
final class TerminalRelay {
    private static final Logger log = LoggerFactory.getLogger(TerminalRelay.class);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private final WebSocket upstream;

    private TerminalRelay(WebSocket upstream) {
        this.upstream = upstream;
    }

    /** Opens the terminal at {@code node} for {@code downstream}; what it sends comes back to {@code downstream}. */
    static TerminalRelay open(HttpClient client, WsContext downstream, Node node, String path, String thisNode)
            throws InterruptedException, ExecutionException, TimeoutException {
        String base = node.advertiseUrl().toString().replaceFirst("^http", "ws");
        String query = downstream.queryString();
        var builder = client.newWebSocketBuilder().connectTimeout(CONNECT_TIMEOUT).header(NodeForwarder.FORWARDED_BY, thisNode);
        String authorization = BearerAuth.authorizationOfUpgrade(downstream.header("Authorization"), downstream.header("Sec-WebSocket-Protocol"));
        if (authorization != null) builder.header("Authorization", authorization);
        var socket = builder.buildAsync(URI.create(base + path + (query == null ? "" : "?" + query)), new Back(downstream))
                .get(CONNECT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        return new TerminalRelay(socket);
    }

    void binary(ByteBuffer data) {
        upstream.sendBinary(data, true).join();
    }

    void text(String message) {
        upstream.sendText(message, true).join();
    }

    /** The caller closed: the other node's socket closes too (a new terminal is hung up there, as here). */
    void close(int code, String reason) {
        if (upstream.isOutputClosed()) return;
        int sendable = code == 1005 || code == 1006 || code == 1015 ? WebSocket.NORMAL_CLOSURE : code;
        upstream.sendClose(sendable, reason == null ? "" : reason).orTimeout(5, TimeUnit.SECONDS).exceptionally(e -> null);
    }

    /** What the other node sends, passed on to the caller. */
    private static final class Back implements WebSocket.Listener {
        private final WsContext downstream;
        private final StringBuilder text = new StringBuilder();
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

        Back(WsContext downstream) {
            this.downstream = downstream;
        }

        @Override
        public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                String message = text.toString();
                text.setLength(0);
                synchronized (downstream) {
                    downstream.send(message);
                }
            }
            socket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket socket, ByteBuffer data, boolean last) {
            byte[] chunk = new byte[data.remaining()];
            data.get(chunk);
            bytes.writeBytes(chunk);
            if (last) {
                var message = ByteBuffer.wrap(bytes.toByteArray());
                bytes.reset();
                synchronized (downstream) {
                    downstream.send(message);
                }
            }
            socket.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket socket, int code, String reason) {
            downstream.closeSession(code, reason);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void onError(WebSocket socket, Throwable error) {
            log.atDebug().setCause(error).log("the other node's terminal socket failed");
            downstream.closeSession(1011, "the sandbox's node closed the terminal");
        }
    }
}
