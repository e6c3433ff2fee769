package io.stasis.network.linux.proxy;

import io.stasis.network.linux.EgressGate;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transparent egress proxy: it receives the sandboxes' connections to ports 80 and 443 that
 * nftables redirected to it, finds the name each presents (HTTP Host, TLS SNI), asks the
 * {@link EgressGate}, and either refuses (recorded with {@link EgressGate#denied}) or carries the
 * connection upstream, to an address the name really resolves to when a domain rule allowed it (see
 * {@link UpstreamChoice}).
 *
 * <p>Wiring: for traffic arriving from sandbox interfaces, {@code nat prerouting tcp dport 80
 * redirect to :}{@link #httpPort()} and {@code tcp dport 443 redirect to :}{@link #tlsPort()}, except
 * to destinations the policy allows by CIDR. Bind to an address REDIRECT maps to (it rewrites to the
 * incoming interface's primary address), so the wildcard {@code 0.0.0.0} unless every veth shares one
 * host address; IPv4 only. A sandbox dialling the proxy port itself is refused.
 *
 * <p>Threads: one platform thread per port accepting, and per connection two virtual threads (one
 * per direction): the client's socket is non-blocking, and a read or write that would block parks
 * its thread until the {@link ReadinessPoller} (two platform threads in {@code epoll_wait}, for the
 * whole proxy) wakes it. At most {@value #MAX_ACTIVE} connections at once; more are closed on accept. Per sandbox, the
 * {@link EgressLimits}: at most so many relayed connections at once (more are refused, and audited
 * as denied), and a connection idle past the timeout (no byte either way) is closed by a watcher
 * that looks every second.
 *
 * <p>Not defended: what travels inside an allowed TLS session (a CDN that serves both an allowed and
 * a refused name can be reached through the allowed one: the HTTP Host inside TLS is not visible
 * without interception), and requests after the first on a kept-alive plain HTTP connection.
 */
public final class EgressProxy implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EgressProxy.class);
    static final int MAX_ACTIVE = 4096;
    static final Duration HEAD_TIMEOUT = Duration.ofSeconds(10);
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private final EgressGate gate;
    private final NameResolver resolver;
    private final EgressLimits limits;
    private final SandboxConnections connections;
    private volatile Thread idleWatcher;
    private final Counters counters = new Counters();
    private final Set<ConnectionHandler> active = ConcurrentHashMap.newKeySet();
    private final Set<Thread> handlerThreads = ConcurrentHashMap.newKeySet();
    private final AtomicLong connectionIds = new AtomicLong();
    private final RelayCarrier relay;
    private final ThreadFactory downstream;
    /** The relay, or the intercepting carrier around it once {@link #intercept} was called. */
    private volatile Carrier carrier;
    private ProxyListener http;
    private ProxyListener tls;

    private EgressProxy(EgressGate gate, NameResolver resolver, EgressLimits limits) {
        this.gate = gate;
        this.resolver = resolver;
        this.limits = limits;
        this.connections = new SandboxConnections(limits.connectionsPerSandbox());
        // Called on the connection's own thread: the upstream-to-sandbox direction is named after it.
        this.downstream = r -> Thread.ofVirtual().name(Thread.currentThread().getName() + "-down").unstarted(r);
        this.relay = new RelayCarrier(CONNECT_TIMEOUT, downstream, counters);
        this.carrier = relay;
    }

    /**
     * From now on, TLS connections whose name has a header rule in their sandbox's policy are
     * intercepted (see {@link InterceptingCarrier}); all others are still relayed untouched.
     */
    public void intercept(Interception interception) {
        this.carrier = new InterceptingCarrier(relay, interception, CONNECT_TIMEOUT, downstream);
    }

    /**
     * Binds both ports and starts accepting.
     *
     * @param bindAddress an IPv4 address (often {@code 0.0.0.0}); see the class comment
     * @param httpPort    where port 80 traffic is redirected; 0 for any free port
     * @param tlsPort     where port 443 traffic is redirected; 0 for any free port
     * @throws UncheckedIOException naming the address and errno if a port cannot be bound; nothing is left open
     */
    public static EgressProxy start(EgressGate gate, NameResolver resolver, InetAddress bindAddress, int httpPort, int tlsPort) {
        return start(gate, resolver, bindAddress, httpPort, tlsPort, EgressLimits.DEFAULTS);
    }

    /** As above, with these {@code limits} per sandbox. */
    public static EgressProxy start(EgressGate gate, NameResolver resolver, InetAddress bindAddress, int httpPort, int tlsPort,
                                    EgressLimits limits) {
        Objects.requireNonNull(gate, "gate");
        Objects.requireNonNull(resolver, "resolver");
        if (!(bindAddress instanceof Inet4Address))
            throw new IllegalArgumentException("the egress proxy binds IPv4 only (SO_ORIGINAL_DST is IPv4), not " + bindAddress);
        var proxy = new EgressProxy(gate, resolver, limits);
        try {
            proxy.http = ProxyListener.start(new InetSocketAddress(bindAddress, httpPort), Protocol.HTTP, c -> proxy.accepted(c, Protocol.HTTP));
            proxy.tls = ProxyListener.start(new InetSocketAddress(bindAddress, tlsPort), Protocol.TLS, c -> proxy.accepted(c, Protocol.TLS));
        } catch (IOException e) {
            proxy.close();
            throw new UncheckedIOException("egress proxy cannot listen on " + bindAddress.getHostAddress() + " ports " + httpPort + "/" + tlsPort, e);
        }
        if (!limits.idleTimeout().isZero()) proxy.idleWatcher = Thread.ofVirtual().name("egress-idle").start(proxy::closeIdle);
        log.atInfo().addKeyValue("address", bindAddress.getHostAddress()).addKeyValue("httpPort", proxy.httpPort())
                .addKeyValue("tlsPort", proxy.tlsPort()).addKeyValue("limits", limits).log("egress proxy listening");
        return proxy;
    }

    public int httpPort() {
        return http.port();
    }

    public int tlsPort() {
        return tls.port();
    }

    public ProxyStats stats() {
        return counters.snapshot();
    }

    /** Once a second: closes the connections idle past the timeout. */
    private void closeIdle() {
        long timeout = limits.idleTimeout().toNanos();
        try {
            while (!Thread.currentThread().isInterrupted()) {
                Thread.sleep(Duration.ofSeconds(1));
                long now = System.nanoTime();
                for (var handler : active) {
                    if (handler.idleNanos(now) < timeout) continue;
                    log.atInfo().addKeyValue("connection", handler).addKeyValue("idleSeconds", limits.idleTimeout().toSeconds())
                            .log("egress connection idle too long; closed");
                    counters.idleClosed.increment();
                    handler.abort();
                }
            }
        } catch (InterruptedException e) {
            // closing
        }
    }

    private void accepted(NativeSocket client, Protocol protocol) {
        counters.accepted.increment();
        if (counters.active.get() >= MAX_ACTIVE) {
            counters.failed.increment();
            log.atWarn().addKeyValue("active", MAX_ACTIVE).log("egress proxy full; connection closed");
            client.close();
            return;
        }
        var handler = new ConnectionHandler(client, protocol, gate, resolver, carrier, counters, HEAD_TIMEOUT, connections,
                limits.connectionRule());
        long id = connectionIds.incrementAndGet();
        Thread thread = Thread.ofVirtual().name("egress-" + protocol.wireName() + "-" + id).unstarted(() -> {
            try {
                handler.run();
            } finally {
                active.remove(handler);
                counters.active.decrementAndGet();
                handlerThreads.remove(Thread.currentThread());
            }
        });
        counters.active.incrementAndGet();
        active.add(handler);
        handlerThreads.add(thread);
        thread.start();
    }

    /** Stops accepting, cuts every open connection and waits (up to 5 s) for their threads. Idempotent. */
    @Override
    public void close() {
        if (idleWatcher != null) idleWatcher.interrupt();
        if (http != null) http.close();
        if (tls != null) tls.close();
        active.forEach(ConnectionHandler::abort);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (Thread t : handlerThreads) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            try {
                if (left > 0) t.join(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        if (!handlerThreads.isEmpty())
            log.atWarn().addKeyValue("threads", handlerThreads.size()).log("egress connections still closing after 5 s");
    }
}
