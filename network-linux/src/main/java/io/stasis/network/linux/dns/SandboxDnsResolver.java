package io.stasis.network.linux.dns;

import io.stasis.network.linux.EgressGate;
import java.io.IOException;
import java.net.BindException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DNS server sandboxes reach through nftables' redirect of their port 53: UDP and TCP on one
 * port, one virtual thread per UDP query and per TCP connection. Each query is judged by
 * {@link EgressGate} (see {@link DnsQueryHandler} for the answers), allowed names not among the
 * static records are forwarded to {@link DnsUpstreams}.
 *
 * <p>{@link #start} binds and serves; {@link #close} closes the sockets, interrupts the queries in
 * flight and waits for their threads, so nothing is left behind.
 */
public final class SandboxDnsResolver implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SandboxDnsResolver.class);
    /** Queries (UDP) and connections (TCP) served at once; beyond, UDP is dropped (clients retry) and TCP closed. */
    static final int MAX_IN_FLIGHT = 1024;
    private static final int MAX_UDP_QUERY = 65_535;
    /** A TCP client that sends nothing for this long is closed (RFC 7766 suggests seconds). */
    private static final Duration TCP_IDLE = Duration.ofSeconds(10);
    private static final int BIND_ATTEMPTS = 10;
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

    private final DatagramSocket udp;
    private final ServerSocket tcp;
    private final DnsQueryHandler handler;
    private final Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);
    private final ExecutorService queries = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("dns-query-", 0).factory());
    private final Thread udpLoop;
    private final Thread tcpLoop;
    private volatile boolean closed;

    private SandboxDnsResolver(DatagramSocket udp, ServerSocket tcp, DnsQueryHandler handler) {
        this.udp = udp;
        this.tcp = tcp;
        this.handler = handler;
        this.udpLoop = Thread.ofVirtual().name("dns-udp-" + port()).start(this::serveUdp);
        this.tcpLoop = Thread.ofVirtual().name("dns-tcp-" + port()).start(this::serveTcp);
    }

    /**
     * Binds UDP and TCP on {@code bind} (port 0: one free for both) and starts serving.
     *
     * @param staticRecords names answered without upstream (A records, TTL 60), still subject to the policy
     * @throws IOException if the port cannot be bound for both protocols
     */
    public static SandboxDnsResolver start(EgressGate gate, DnsUpstreams upstreams, Map<String, List<Inet4Address>> staticRecords,
                                           InetSocketAddress bind) throws IOException {
        var handler = new DnsQueryHandler(gate, new StaticRecords(staticRecords), new UpstreamForwarder(upstreams));
        if (upstreams.servers().isEmpty()) log.atWarn().log("no upstream resolvers: only static names will resolve");
        for (int attempt = 1; ; attempt++) {
            var udp = new DatagramSocket(bind);
            try {
                var tcp = new ServerSocket();
                try {
                    tcp.bind(new InetSocketAddress(bind.getAddress(), udp.getLocalPort()));
                } catch (IOException e) {
                    tcp.close();
                    throw e;
                }
                var resolver = new SandboxDnsResolver(udp, tcp, handler);
                log.atInfo().addKeyValue("address", bind.getAddress().getHostAddress()).addKeyValue("port", resolver.port())
                        .addKeyValue("upstreams", upstreams.servers()).addKeyValue("staticNames", staticRecords.size()).log("sandbox DNS resolver serving");
                return resolver;
            } catch (BindException e) {
                udp.close();
                // An ephemeral UDP port may be taken for TCP: pick another. A fixed port is the caller's to fix.
                if (bind.getPort() != 0 || attempt == BIND_ATTEMPTS)
                    throw new BindException("cannot bind DNS on " + bind + " for UDP and TCP alike: " + e.getMessage());
            } catch (IOException | RuntimeException e) {
                udp.close();
                throw e;
            }
        }
    }

    /** The port bound for both UDP and TCP: what nftables redirects to. */
    public int port() {
        return udp.getLocalPort();
    }

    public InetSocketAddress address() {
        return new InetSocketAddress(udp.getLocalAddress(), port());
    }

    /** Stops serving: no query is answered after this returns, and no thread or socket is left. Idempotent. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        udp.close();
        try {
            tcp.close();
        } catch (IOException e) {
            log.atWarn().addKeyValue("port", port()).addKeyValue("error", e.toString()).log("closing the DNS TCP socket failed");
        }
        queries.shutdownNow(); // interrupting a virtual thread in socket I/O closes that socket
        try {
            udpLoop.join(CLOSE_WAIT);
            tcpLoop.join(CLOSE_WAIT);
            if (!queries.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS))
                log.atWarn().addKeyValue("port", port()).log("DNS queries still running after close");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void serveUdp() {
        byte[] buffer = new byte[MAX_UDP_QUERY];
        while (!closed) {
            var packet = new DatagramPacket(buffer, buffer.length);
            try {
                udp.receive(packet);
            } catch (IOException e) {
                if (!closed) log.atWarn().addKeyValue("port", port()).addKeyValue("error", e.toString()).log("DNS UDP receive failed");
                if (udp.isClosed()) return;
                continue;
            }
            byte[] query = Arrays.copyOf(buffer, packet.getLength());
            var client = (InetSocketAddress) packet.getSocketAddress();
            submit(() -> answerUdp(query, client), "udp", client.getAddress());
        }
    }

    private void answerUdp(byte[] query, InetSocketAddress client) {
        Optional<byte[]> answer = answerSafely(query, client.getAddress(), Transport.UDP);
        if (answer.isEmpty()) return;
        try {
            udp.send(new DatagramPacket(answer.get(), answer.get().length, client));
        } catch (IOException e) {
            if (!closed) log.atDebug().addKeyValue("client", client).addKeyValue("error", e.toString()).log("sending a DNS answer failed");
        }
    }

    private void serveTcp() {
        while (!closed) {
            Socket connection;
            try {
                connection = tcp.accept();
            } catch (IOException e) {
                if (!closed) log.atWarn().addKeyValue("port", port()).addKeyValue("error", e.toString()).log("DNS TCP accept failed");
                if (tcp.isClosed()) return;
                continue;
            }
            if (!submit(() -> serveConnection(connection), "tcp", connection.getInetAddress())) closeQuietly(connection);
        }
    }

    /** Answers the connection's queries in turn (RFC 7766 allows several per connection) until it closes or idles. */
    private void serveConnection(Socket connection) {
        try (connection) {
            connection.setSoTimeout((int) TCP_IDLE.toMillis());
            while (!closed) {
                Optional<byte[]> query = DnsTcp.read(connection.getInputStream());
                if (query.isEmpty()) return;
                Optional<byte[]> answer = answerSafely(query.get(), connection.getInetAddress(), Transport.TCP);
                if (answer.isEmpty()) return;
                DnsTcp.write(connection.getOutputStream(), answer.get());
            }
        } catch (IOException e) {
            if (!closed) log.atDebug().addKeyValue("client", connection.getRemoteSocketAddress()).addKeyValue("error", e.toString()).log("DNS TCP connection ended");
        }
    }

    /** Runs {@code task} on its own virtual thread if fewer than {@link #MAX_IN_FLIGHT} run; false if it was not run. */
    private boolean submit(Runnable task, String transport, InetAddress client) {
        if (!inFlight.tryAcquire()) {
            log.atDebug().addKeyValue("client", client.getHostAddress()).addKeyValue("transport", transport).log("too many DNS queries in flight; dropped one");
            return false;
        }
        try {
            queries.execute(() -> {
                try {
                    task.run();
                } finally {
                    inFlight.release();
                }
            });
            return true;
        } catch (RejectedExecutionException e) {
            inFlight.release(); // closing
            return false;
        }
    }

    /** The handler's answer; a bug in it (or in the gate) costs the client a SERVFAIL, never the server its loop. */
    private Optional<byte[]> answerSafely(byte[] query, InetAddress source, Transport transport) {
        try {
            return handler.answer(query, source, transport);
        } catch (RuntimeException e) {
            log.atError().addKeyValue("source", source.getHostAddress()).addKeyValue("transport", transport.wireName()).setCause(e).log("answering a DNS query failed");
            try {
                return Optional.of(DnsMessage.reply(DnsHeader.peek(query), Rcode.SERVFAIL).encode());
            } catch (DnsFormatException unreadable) {
                return Optional.empty();
            }
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            log.atDebug().addKeyValue("error", e.toString()).log("closing a refused DNS TCP connection failed");
        }
    }

    @Override
    public String toString() {
        return "SandboxDnsResolver[" + address() + "]";
    }
}
