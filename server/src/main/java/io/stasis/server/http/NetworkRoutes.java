package io.stasis.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.json.PolicyJson;
import io.stasis.core.network.NetworkService;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;

/** A sandbox's network: its addresses and egress policy, read and replaced while it runs. */
final class NetworkRoutes {
    private final NetworkService network;

    NetworkRoutes(NetworkService network) {
        this.network = network;
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/sandboxes/{id}/network", this::get, Access.SANDBOX_READ);
        routes.put("/v1/sandboxes/{id}/network", this::replace, Access.NETWORK);
    }

    private void get(Context ctx) {
        var id = new SandboxId(AccessGuard.sandboxId(ctx));
        ctx.json(NetworkJson.view(id.value(), network.view(id)));
    }

    private void replace(Context ctx) {
        var id = new SandboxId(AccessGuard.sandboxId(ctx));
        var policy = PolicyJson.readNetwork(Json.body(ctx, JsonNode.class), "network");
        ctx.json(NetworkJson.view(id.value(), network.update(id, policy)));
    }
}
