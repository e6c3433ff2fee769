package io.stasis.server.http;

import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.core.sandbox.SandboxId;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.error.StasisException;
import io.stasis.server.http.Views.CheckpointView;
import io.stasis.server.http.Views.ListView;
import io.stasis.server.http.Views.SandboxView;
import java.util.Optional;

/** Checkpoints of a sandbox, and forks from them. */
final class CheckpointRoutes {
    private final CheckpointService checkpoints;

    CheckpointRoutes(CheckpointService checkpoints) {
        this.checkpoints = checkpoints;
    }

    void register(RoutesConfig routes) {
        routes.post("/v1/sandboxes/{id}/checkpoints", this::create, Access.CHECKPOINTS);
        routes.get("/v1/sandboxes/{id}/checkpoints", ctx -> ctx.json(new ListView<>(
                checkpoints.list(sandboxId(ctx)).stream().map(CheckpointView::of).toList(), null)), Access.SANDBOX_READ);
        routes.get("/v1/checkpoints/{cid}", ctx -> ctx.json(CheckpointView.of(checkpoints.get(checkpointId(ctx)))), Access.CHECKPOINT_READ);
        routes.delete("/v1/checkpoints/{cid}", ctx -> {
            checkpoints.delete(checkpointId(ctx));
            ctx.status(204);
        }, Access.CHECKPOINT_DELETE);
        routes.post("/v1/sandboxes/{id}/fork", this::fork, Access.CHECKPOINTS);
        routes.get("/v1/sandboxes/{id}/forks", ctx -> ctx.json(new ListView<>(
                checkpoints.forks(sandboxId(ctx)).stream().map(SandboxView::of).toList(), null)), Access.SANDBOX_READ);
    }

    private static CheckpointId checkpointId(Context ctx) {
        String raw = ctx.pathParam("cid");
        if (!CheckpointId.isValid(raw)) throw CheckpointService.notFound(raw);
        return new CheckpointId(raw);
    }

    private void create(Context ctx) {
        var id = sandboxId(ctx);
        var body = Json.body(ctx, Bodies.CreateCheckpoint.class);
        if (body.memory() == null)
            throw StasisException.invalid("memory", "is required: true to keep the processes and their memory, false for the files only");
        var made = checkpoints.create(id, Optional.ofNullable(body.name()), body.memory());
        ctx.status(201).json(CheckpointView.of(made));
    }

    private void fork(Context ctx) {
        var id = sandboxId(ctx);
        var body = Json.body(ctx, Bodies.Fork.class);
        Optional<CheckpointId> from = Optional.ofNullable(body.checkpoint()).map(c -> {
            if (!CheckpointId.isValid(c)) throw CheckpointService.notFound(c);
            return new CheckpointId(c);
        });
        int count = body.count() == null ? 1 : body.count();
        if (count < 1) throw StasisException.invalid("count", "must be between 1 and " + CheckpointService.MAX_FORKS);
        var forks = checkpoints.fork(id, from, count, Optional.ofNullable(body.name()));
        ctx.status(201).json(new ListView<>(forks.stream().map(SandboxView::of).toList(), null));
    }

    private static SandboxId sandboxId(Context ctx) {
        return new SandboxId(AccessGuard.sandboxId(ctx));
    }
}
