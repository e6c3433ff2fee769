package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.stasis.core.node.NodeCapacity;
import io.stasis.core.node.NodeService;
import io.stasis.server.auth.Access;
import java.time.Instant;

/** {@code GET /v1/nodes}: the nodes sharing the catalog, for the operator (the root key). */
final class NodeRoutes {
    private final NodeService nodes;

    NodeRoutes(NodeService nodes) {
        this.nodes = nodes;
    }

    /** A node as the API shows it; {@code local}: the node that answered. */
    record NodeView(String name, String advertiseUrl, boolean alive, boolean local, Instant startedAt, Instant leaseUntil,
                    int sandboxes, NodeCapacity capacity) {
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/nodes", ctx -> ctx.json(new Views.ListView<>(nodes.list().stream()
                .map(s -> new NodeView(s.node().name(), s.node().advertiseUrl().toString(), s.alive(), s.local(), s.node().startedAt(),
                        s.node().leaseUntil(), s.sandboxes(), s.node().capacity()))
                .toList(), null)), Access.ROOT);
    }
}
