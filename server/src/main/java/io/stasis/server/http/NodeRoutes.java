package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.node.NodeCapacity;
import io.stasis.core.node.NodeDrain;
import io.stasis.core.node.NodeService;
import io.stasis.server.auth.Access;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The nodes sharing the catalog, for the operator (the root key): {@code GET /v1/nodes}, and
 * {@code POST /v1/nodes/{name}/drain} (and {@code DELETE} to end it), served by the named node
 * whichever node receives it.
 */
final class NodeRoutes {
    private final NodeService nodes;
    private final NodeDrain drain;
    private final NodeForwarder forwarder;

    NodeRoutes(NodeService nodes, NodeDrain drain, NodeForwarder forwarder) {
        this.nodes = nodes;
        this.drain = drain;
        this.forwarder = forwarder;
    }

    /** A node as the API shows it; {@code local}: the node that answered. */
    record NodeView(String name, String advertiseUrl, String previewUrl, boolean alive, boolean local, boolean draining, Instant startedAt, Instant leaseUntil,
                    int sandboxes, CapacityView capacity) {
    }

    /** What a node last reported with its lease; its limits flat beside it, 0 for none. */
    record CapacityView(long memoryTotalMb, long memoryAvailableMb, long diskFreeMb, int runningSandboxes, int maxRunningSandboxes,
                        long maxMemoryMb) {
        static CapacityView of(NodeCapacity c) {
            return new CapacityView(c.memoryTotalMb(), c.memoryAvailableMb(), c.diskFreeMb(), c.runningSandboxes(),
                    c.limits().runningSandboxes(), c.limits().memoryMb());
        }
    }

    /** What a drain did: the sandboxes handed over to the other nodes, and those left with why. */
    record DrainView(String node, boolean draining, List<String> handedOver, List<Map<String, String>> left) {
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/nodes", ctx -> ctx.json(new Views.ListView<>(nodes.list().stream()
                .map(s -> new NodeView(s.node().name(), s.node().advertiseUrl().toString(), s.node().previewUrl().map(Object::toString).orElse(null), s.alive(), s.local(), s.node().draining(),
                        s.node().startedAt(), s.node().leaseUntil(), s.sandboxes(), CapacityView.of(s.node().capacity())))
                .toList(), null)), Access.ROOT);
        routes.post("/v1/nodes/{name}/drain", ctx -> {
            if (passedOn(ctx)) return;
            var report = nodes.whileMarked(true, drain::drain);
            ctx.json(new DrainView(report.node(), true, report.handedOver().stream().map(id -> id.value()).toList(),
                    report.left().stream().map(l -> Map.of("sandboxId", l.sandbox().value(), "why", l.why())).toList()));
        }, Access.ROOT);
        routes.delete("/v1/nodes/{name}/drain", ctx -> {
            if (passedOn(ctx)) return;
            nodes.whileMarked(false, () -> {
                drain.undrain();
                return null;
            });
            ctx.status(204);
        }, Access.ROOT);
    }

    /** A drain concerns the named node: another node's is passed to it. */
    private boolean passedOn(Context ctx) throws Exception {
        String name = ctx.pathParam("name");
        if (name.equals(nodes.name())) return false;
        var status = nodes.list().stream().filter(s -> s.node().name().equals(name)).findFirst()
                .orElseThrow(() -> new StasisException(ErrorCode.NOT_FOUND, "no node named '" + name + "'", Map.of("node", name)));
        if (!status.alive())
            throw new StasisException(ErrorCode.NODE_UNAVAILABLE, "node " + name + " is not available (its lease has lapsed): it cannot be"
                    + " drained; its durably hibernated sandboxes move to the other nodes by themselves", Map.of("node", name));
        forwarder.passTo(ctx, status.node());
        return true;
    }
}
