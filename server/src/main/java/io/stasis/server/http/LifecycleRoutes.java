package io.stasis.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.json.PolicyJson;
import io.stasis.core.bucket.SandboxBuckets;
import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.error.StasisException;
import io.stasis.core.lifecycle.LifecycleService.Reason;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.http.Views.SandboxView;
import java.util.function.BiFunction;

/** State changes: pause, standby, resume, hibernate, stop, start, and the idle policy. Each returns the sandbox in its new state. */
final class LifecycleRoutes {
    private final SandboxService sandboxes;
    private final LifecycleService lifecycle;
    private final SandboxBuckets buckets;
    private final CheckpointService checkpoints;

    LifecycleRoutes(SandboxService sandboxes, LifecycleService lifecycle, CheckpointService checkpoints, SandboxBuckets buckets) {
        this.sandboxes = sandboxes;
        this.lifecycle = lifecycle;
        this.checkpoints = checkpoints;
        this.buckets = buckets;
    }

    void register(RoutesConfig routes) {
        action(routes, "pause", lifecycle::pause);
        action(routes, "standby", lifecycle::standby);
        routes.post("/v1/sandboxes/{id}/resume", this::resume, Access.SANDBOX_LIFECYCLE);
        action(routes, "hibernate", lifecycle::hibernate);
        action(routes, "stop", lifecycle::stop);
        action(routes, "start", lifecycle::start);
        routes.patch("/v1/sandboxes/{id}/lifecycle", this::updatePolicy, Access.SANDBOX_LIFECYCLE);
    }

    private void action(RoutesConfig routes, String name, BiFunction<SandboxId, Reason, Sandbox> change) {
        routes.post("/v1/sandboxes/{id}/" + name, ctx -> {
            var id = new SandboxId(AccessGuard.sandboxId(ctx));
            ctx.json(SandboxView.of(change.apply(id, Reason.API), buckets)); // with what its buckets still upload after a stop or hibernate
        }, Access.SANDBOX_LIFECYCLE);
    }

    /** The body of a resume, optional: {@code expectGeneration}, the generation the caller saw last. */
    record ResumeRequest(Long expectGeneration) {
        ResumeRequest {
            if (expectGeneration != null && expectGeneration < 1)
                throw StasisException.invalid("expectGeneration", "must be 1 or more, was " + expectGeneration);
        }
    }

    private void resume(Context ctx) {
        var id = new SandboxId(AccessGuard.sandboxId(ctx));
        var request = Json.body(ctx, ResumeRequest.class);
        var resumed = request.expectGeneration() == null ? lifecycle.resume(id, Reason.API)
                : lifecycle.resume(id, Reason.API, request.expectGeneration());
        ctx.json(SandboxView.of(resumed, buckets).withDurableImage(checkpoints.durableImage(id)));
    }

    private void updatePolicy(Context ctx) {
        var sandbox = sandboxes.get(AccessGuard.sandboxId(ctx));
        JsonNode changes = Json.body(ctx, JsonNode.class);
        var policy = PolicyJson.mergeLifecycle(sandbox.lifecycle(), changes);
        ctx.json(SandboxView.of(lifecycle.updatePolicy(sandbox.id(), policy)));
    }
}
