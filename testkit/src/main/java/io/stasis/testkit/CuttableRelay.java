package io.stasis.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP relay on loopback to a port on loopback that a test can cut and mend: a service reaches a
 * server through it, and a cut leaves the service running but out of the server's reach, as a network
 * partition would (every open connection is reset, new ones are closed at once).
 */
public final class CuttableRelay implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean cut;

    private CuttableRelay(ServerSocket listener, int targetPort) {
        this.listener = listener;
        this.targetPort = targetPort;
    }

    /** Relays a free loopback port to {@code targetPort} on loopback. */
    public static CuttableRelay to(int targetPort) throws IOException {
        var listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        var relay = new CuttableRelay(listener, targetPort);
        Thread.ofVirtual().name("relay-accept").start(relay::acceptUntilClosed);
        return relay;
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** Resets every connection through the relay and refuses new ones until {@link #mend}. */
    public void cut() {
        cut = true;
        for (Socket socket : open) closeQuietly(socket);
        open.clear();
    }

    public void mend() {
        cut = false;
    }

    private void acceptUntilClosed() {
        while (!listener.isClosed()) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return;
            }
            if (cut) {
                closeQuietly(client);
                continue;
            }
            Thread.ofVirtual().name("relay-connect").start(() -> relay(client));
        }
    }

    private void relay(Socket client) {
        var server = new Socket();
        try {
            server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5_000);
        } catch (IOException e) {
            closeQuietly(client);
            closeQuietly(server);
            return;
        }
        open.add(client);
        open.add(server);
        if (cut) cut(); // cut while connecting
        Thread.ofVirtual().name("relay-up").start(() -> pipe(client, server));
        Thread.ofVirtual().name("relay-down").start(() -> pipe(server, client));
    }

    private void pipe(Socket from, Socket to) {
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
            in.transferTo(out);
        } catch (IOException e) {
            // one side went away, or the relay was cut: both ends close below
        } finally {
            closeQuietly(from);
            closeQuietly(to);
            open.remove(from);
            open.remove(to);
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.setSoLinger(true, 0); // a reset, as a partition seen from the sending side
        } catch (IOException e) {
            // closed already
        }
        try {
            socket.close();
        } catch (IOException e) {
            // closed already
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        cut();
    }
}
