package io.stasis.network.linux.proxy;

import io.stasis.core.network.EgressAttempt;
import io.stasis.core.network.EgressDecision;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.network.linux.EgressGate;
import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One redirected connection from accept to close, on its own virtual thread: whose it is, where it
 * was going, what name it presents, what the policy says, and then the {@link Carrier}.
 */
final class ConnectionHandler implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(ConnectionHandler.class);
    static final String DIRECT = "blocked direct connection to the proxy";

    private final NativeSocket client;
    private final Protocol protocol;
    private final EgressGate gate;
    private final NameResolver resolver;
    private final Carrier carrier;
    private final Counters counters;
    private final Duration headTimeout;
    private final Teardown teardown = new Teardown();
    private final SandboxConnections connections;
    private final String connectionRule;

    /**
     * @param connections    the sandboxes' open connections, held to their limit
     * @param connectionRule the rule a refusal past it names
     */
    ConnectionHandler(NativeSocket client, Protocol protocol, EgressGate gate, NameResolver resolver, Carrier carrier,
                      Counters counters, Duration headTimeout, SandboxConnections connections, String connectionRule) {
        this.connections = connections;
        this.connectionRule = connectionRule;
        this.client = client;
        this.protocol = protocol;
        this.gate = gate;
        this.resolver = resolver;
        this.carrier = carrier;
        this.counters = counters;
        this.headTimeout = headTimeout;
        teardown.add(client::abort);
    }

    /** Stops the connection from another thread; {@link #run} then returns and closes it. */
    void abort() {
        teardown.abort();
    }

    /** How long no byte went through the sandbox's side of it, either way. */
    long idleNanos(long now) {
        return client.idleNanos(now);
    }

    @Override
    public void run() {
        try (client) {
            handle();
        } catch (RuntimeException e) {
            counters.failed.increment();
            log.atWarn().addKeyValue("protocol", protocol.wireName()).setCause(e).log("egress connection failed unexpectedly");
        } finally {
            teardown.abort();
        }
    }

    private void handle() {
        InetSocketAddress peer;
        InetSocketAddress original;
        InetSocketAddress local;
        try {
            peer = client.peer();
            original = client.originalDestination();
            local = client.localAddress();
        } catch (NativeSocketException e) {
            // ENOENT: no conntrack entry, so not a redirected connection; ENOTCONN: the client already left.
            fail(null, "cannot identify the connection", e.getMessage());
            return;
        }
        Optional<SandboxId> owner = gate.sandboxAt(peer.getAddress());
        if (owner.isEmpty()) {
            log.atWarn().addKeyValue("peer", peer).addKeyValue("protocol", protocol.wireName()).log("egress connection from an address no sandbox owns; closed");
            counters.failed.increment();
            return;
        }
        SandboxId sandbox = owner.get();
        if (!connections.tryOpen(sandbox)) {
            deny(sandbox, Optional.empty(), original, connectionRule);
            return;
        }
        try {
            handle(sandbox, original, local);
        } finally {
            connections.closed(sandbox);
        }
    }

    private void handle(SandboxId sandbox, InetSocketAddress original, InetSocketAddress local) {
        // Nothing rewrote the destination: the sandbox dialled the proxy's own port, which would loop.
        if (original.equals(local)) {
            deny(sandbox, Optional.empty(), original, DIRECT);
            return;
        }
        HeadReader.ClientHead head;
        try {
            head = HeadReader.read(client, protocol, headTimeout);
        } catch (MalformedHeadException e) {
            log.atInfo().addKeyValue("sandbox", sandbox).addKeyValue("destination", original).addKeyValue("detail", e.getMessage())
                    .log("egress connection does not start with a readable " + protocol.wireName() + " head");
            deny(sandbox, Optional.empty(), original, e.rule());
            return;
        } catch (SocketTimeoutException | EOFException e) {
            fail(sandbox, "no " + protocol.wireName() + " head", e.getMessage());
            return;
        } catch (IOException e) {
            fail(sandbox, "reading the head failed", e.getMessage());
            return;
        }
        EgressDecision decision = gate.connection(sandbox, head.name(), original.getAddress());
        if (!decision.allowed()) {
            deny(sandbox, head.name(), original, decision.rule());
            return;
        }
        switch (UpstreamChoice.choose(gate, resolver, sandbox, head.name(), decision, original)) {
            case UpstreamChoice.Refuse(String rule) -> deny(sandbox, head.name(), original, rule);
            case UpstreamChoice.Connect(InetSocketAddress upstream) -> carry(new AllowedFlow(sandbox, protocol, head.name(), upstream, head.bytes()), decision, original);
        }
    }

    private void carry(AllowedFlow flow, EgressDecision decision, InetSocketAddress original) {
        counters.allowed.increment();
        gate.allowed(flow.sandbox(), new EgressAttempt(flow.name(), Optional.of(original.getAddress().getHostAddress()), original.getPort(),
                protocol.wireName(), decision.rule()));
        log.atDebug().addKeyValue("sandbox", flow.sandbox()).addKeyValue("protocol", protocol.wireName())
                .addKeyValue("name", flow.name().orElse("")).addKeyValue("destination", original)
                .addKeyValue("upstream", flow.upstream()).addKeyValue("rule", decision.rule()).log("egress connection allowed");
        try {
            client.noDelay(); // relayed segments go out as they come: Nagle would hold back each answer's tail
            carrier.carry(flow, client, teardown);
        } catch (Carrier.UpstreamUnreachableException e) {
            counters.failed.increment();
            log.atInfo().addKeyValue("sandbox", flow.sandbox()).addKeyValue("upstream", flow.upstream())
                    .addKeyValue("error", e.getCause().getMessage()).log("egress upstream unreachable");
            send(protocol.unreachable());
        } catch (IOException e) {
            log.atDebug().addKeyValue("sandbox", flow.sandbox()).addKeyValue("upstream", flow.upstream())
                    .addKeyValue("error", e.getMessage()).log("egress relay ended by an error");
        }
    }

    private void deny(SandboxId sandbox, Optional<String> name, InetSocketAddress original, String rule) {
        counters.denied.increment();
        log.atInfo().addKeyValue("sandbox", sandbox).addKeyValue("protocol", protocol.wireName()).addKeyValue("name", name.orElse(""))
                .addKeyValue("destination", original).addKeyValue("rule", rule).log("egress connection denied");
        gate.denied(sandbox, new EgressAttempt(name, Optional.of(original.getAddress().getHostAddress()), original.getPort(),
                protocol.wireName(), rule));
        send(protocol.refusal(rule, name));
    }

    private void fail(SandboxId sandbox, String what, String detail) {
        counters.failed.increment();
        log.atDebug().addKeyValue("sandbox", sandbox).addKeyValue("protocol", protocol.wireName()).addKeyValue("detail", detail)
                .log("egress connection dropped: " + what);
    }

    /** Best effort: the client may be gone, and it is being closed anyway. */
    private void send(byte[] bytes) {
        if (bytes.length == 0) return;
        try (Arena arena = Arena.ofConfined()) {
            client.write(arena.allocateFrom(ValueLayout.JAVA_BYTE, bytes));
            client.shutdownOutput();
        } catch (NativeSocketException e) {
            log.atDebug().addKeyValue("error", e.getMessage()).log("could not answer the refused client");
        }
    }
}
