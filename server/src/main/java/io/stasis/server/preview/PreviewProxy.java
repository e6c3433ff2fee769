package io.stasis.server.preview;

import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The preview listener: its own port, serving sandbox ports over HTTP/1.1 by host
 * ({@code 3000-sbx-abc.DOMAIN}) or by path ({@code /preview/sbx_abc/3000/}). A small reverse proxy
 * on plain sockets, one virtual thread per connection, so that WebSocket upgrades, streamed
 * responses and kept-alive connections pass through unchanged (see {@link ProxyConnection}).
 * Revoking a preview closes the connections it admitted.
 */
public final class PreviewProxy implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PreviewProxy.class);
    private static final int ACCEPT_QUEUE = 1024;

    /**
     * @param bind   the address to listen on (the API's)
     * @param port   the port (0 picks a free one)
     * @param domain the preview domain of host-based URLs
     */
    public record Settings(String bind, int port, String domain) {
    }

    private final ServerSocket server;
    private final String domain;
    private final PreviewService previews;
    private final PreviewTargets targets;
    private final Clock clock;
    private final Set<ProxyConnection> open = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean closed;

    private PreviewProxy(ServerSocket server, Settings settings, PreviewService previews, PreviewTargets targets, Clock clock) {
        this.server = server;
        this.domain = settings.domain();
        this.previews = previews;
        this.targets = targets;
        this.clock = clock;
        this.acceptor = Thread.ofPlatform().name("preview-accept").daemon().unstarted(this::acceptLoop);
    }

    /** Binds the listener and starts serving. */
    public static PreviewProxy start(Settings settings, PreviewService previews, PreviewTargets targets, Clock clock) {
        ServerSocket server = null;
        try {
            server = new ServerSocket();
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(InetAddress.getByName(settings.bind()), settings.port()), ACCEPT_QUEUE);
        } catch (IOException e) {
            if (server != null) {
                try {
                    server.close();
                } catch (IOException closeFailure) {
                    e.addSuppressed(closeFailure);
                }
            }
            throw new UncheckedIOException("cannot listen for previews on " + settings.bind() + ":" + settings.port(), e);
        }
        var proxy = new PreviewProxy(server, settings, previews, targets, clock);
        previews.onRevoked(proxy::revoked);
        proxy.acceptor.start();
        log.atInfo().addKeyValue("bind", settings.bind()).addKeyValue("port", proxy.port()).addKeyValue("domain", settings.domain())
                .log("preview listener started");
        return proxy;
    }

    public int port() {
        return server.getLocalPort();
    }

    String domain() {
        return domain;
    }

    PreviewService previews() {
        return previews;
    }

    PreviewTargets targets() {
        return targets;
    }

    Clock clock() {
        return clock;
    }

    void forget(ProxyConnection connection) {
        open.remove(connection);
    }

    private void revoked(Preview preview) {
        for (var connection : open) connection.closeIfAdmittedBy(preview.id());
    }

    private void acceptLoop() {
        while (!closed) {
            Socket socket;
            try {
                socket = server.accept();
            } catch (IOException e) {
                if (!closed) log.atWarn().setCause(e).log("preview listener failed to accept; stopping it");
                return;
            }
            try {
                socket.setTcpNoDelay(true);
            } catch (IOException e) {
                log.atDebug().addKeyValue("problem", e.toString()).log("cannot set TCP_NODELAY");
            }
            var connection = new ProxyConnection(socket, this);
            open.add(connection);
            Thread.ofVirtual().name("preview-connection").start(connection);
        }
    }

    /** Stops listening and closes every open connection. */
    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            log.atDebug().addKeyValue("problem", e.toString()).log("closing the preview listener");
        }
        for (var connection : open) connection.close();
        try {
            acceptor.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
