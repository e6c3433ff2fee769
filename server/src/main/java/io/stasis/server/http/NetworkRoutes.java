package io.stasis.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.network.NetworkService;

/** A sandbox's network: its addresses and egress policy, read and replaced while it runs. */
final class NetworkRoutes {
    private final SandboxService sandboxes;
    private final NetworkService network;

    NetworkRoutes(SandboxService sandboxes, NetworkService network) {
        this.sandboxes = sandboxes;
        this.network = network;
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/sandboxes/{id}/network", this::get);
        routes.put("/v1/sandboxes/{id}/network", this::replace);
    }

    private void get(Context ctx) {
        var id = sandboxes.get(ctx.pathParam("id")).id();
        ctx.json(NetworkJson.view(id.value(), network.view(id)));
    }

    private void replace(Context ctx) {
        var id = sandboxes.get(ctx.pathParam("id")).id();
        var policy = NetworkJson.parse(Json.body(ctx, JsonNode.class), "network");
        ctx.json(NetworkJson.view(id.value(), network.update(id, policy)));
    }
}
