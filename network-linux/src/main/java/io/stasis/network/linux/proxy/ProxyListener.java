package io.stasis.network.linux.proxy;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One listening port and its accept loop, on a platform thread that polls in short slices so that
 * {@link #close} can stop it without closing an fd another thread is blocked on.
 */
final class ProxyListener implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProxyListener.class);
    private static final int BACKLOG = 1024;
    private static final int POLL_MILLIS = 200;
    /** After EMFILE and the like, retrying at once would spin: the condition lasts. */
    private static final long ACCEPT_FAILURE_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final NativeSocket socket;
    private final Protocol protocol;
    private final int port;
    private final Consumer<NativeSocket> accepted;
    private final Thread thread;
    private volatile boolean closed;

    private ProxyListener(NativeSocket socket, Protocol protocol, int port, Consumer<NativeSocket> accepted) {
        this.socket = socket;
        this.protocol = protocol;
        this.port = port;
        this.accepted = accepted;
        this.thread = Thread.ofPlatform().daemon().name("egress-" + protocol.wireName() + "-accept").unstarted(this::loop);
    }

    /** Binds {@code address} (port 0: any free port) and starts accepting; each connection goes to {@code accepted}. */
    static ProxyListener start(InetSocketAddress address, Protocol protocol, Consumer<NativeSocket> accepted) throws NativeSocketException {
        NativeSocket socket = NativeSocket.listen(address, BACKLOG);
        try {
            var listener = new ProxyListener(socket, protocol, socket.localAddress().getPort(), accepted);
            listener.thread.start();
            return listener;
        } catch (NativeSocketException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    int port() {
        return port;
    }

    private void loop() {
        while (!closed) {
            try {
                NativeSocket client = socket.accept(POLL_MILLIS);
                if (client != null) accepted.accept(client);
            } catch (NativeSocketException e) {
                log.atWarn().addKeyValue("protocol", protocol.wireName()).addKeyValue("port", port).addKeyValue("error", e.getMessage())
                        .log("egress proxy cannot accept");
                LockSupport.parkNanos(ACCEPT_FAILURE_PAUSE_NANOS);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            thread.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // Only now: the loop's last poll has returned, so no thread still holds the fd number.
        if (!thread.isAlive()) socket.close();
        else log.atError().addKeyValue("port", port).log("egress accept thread did not stop; its socket is left open");
    }
}
