package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.error.StasisException;
import io.stasis.core.policy.Durations;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.auth.BearerAuth;
import io.stasis.server.http.Views.CheckpointView;
import io.stasis.server.http.Views.ListView;
import io.stasis.server.http.Views.SandboxView;
import java.time.Duration;
import java.util.Optional;

/** Checkpoints of a sandbox, and forks from them. */
final class CheckpointRoutes {
    private static final Duration DEFAULT_SYNC_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration MAX_SYNC_TIMEOUT = Duration.ofHours(1);
    private final CheckpointService checkpoints;

    CheckpointRoutes(CheckpointService checkpoints) {
        this.checkpoints = checkpoints;
    }

    void register(RoutesConfig routes) {
        routes.post("/v1/sandboxes/{id}/checkpoints", this::create, Access.CHECKPOINTS);
        routes.get("/v1/sandboxes/{id}/checkpoints", ctx -> ctx.json(new ListView<>(
                checkpoints.list(sandboxId(ctx)).stream().map(this::view).toList(), null)), Access.SANDBOX_READ);
        routes.get("/v1/checkpoints", this::listOfTenant, Access.TENANT);
        routes.get("/v1/checkpoints/{cid}", ctx -> ctx.json(view(checkpoints.get(checkpointId(ctx)))), Access.CHECKPOINT_READ);
        routes.post("/v1/checkpoints/{cid}/sync", this::sync, Access.CHECKPOINT_SYNC);
        routes.put("/v1/checkpoints/{cid}/spares", this::spares, Access.CHECKPOINT_SPARES);
        routes.delete("/v1/checkpoints/{cid}", ctx -> {
            var id = checkpointId(ctx);
            // The guard checked the tenant: against the catalog, or for a copy only the store holds, its descriptor.
            if (checkpoints.isLocal(id)) checkpoints.delete(id);
            else checkpoints.deleteStored(BearerAuth.caller(ctx).tenant(), id);
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
        var made = checkpoints.create(id, Optional.ofNullable(body.name()), body.memory(), Boolean.TRUE.equals(body.durable()),
                body.spares() == null ? 0 : body.spares());
        ctx.status(201).json(view(made));
    }

    /** How many forks of a memory checkpoint to keep restored ahead; answers the checkpoint, its spares being restored. */
    private void spares(Context ctx) {
        var id = checkpointId(ctx);
        var body = Json.body(ctx, Bodies.Spares.class);
        if (body.count() == null) throw StasisException.invalid("count", "is required: the forks to keep restored ahead (0: none)");
        ctx.json(view(checkpoints.setSpares(id, body.count())));
    }

    /** Waits until the checkpoint is durable, at most {@code ?timeout=} (default 10m); answers the checkpoint: check {@code durable}. */
    private void sync(Context ctx) {
        var id = checkpointId(ctx);
        var timeout = Query.string(ctx, "timeout").map(t -> Durations.parse("timeout", t)).orElse(DEFAULT_SYNC_TIMEOUT);
        if (timeout.compareTo(MAX_SYNC_TIMEOUT) > 0) throw StasisException.invalid("timeout", "must be at most 1h");
        checkpoints.sync(id, timeout);
        ctx.json(view(checkpoints.get(id)));
    }

    /** This instance's checkpoints, or with {@code ?source=store} the durable ones of every instance sharing the blob store. */
    private void listOfTenant(Context ctx) {
        var tenant = BearerAuth.caller(ctx).tenant();
        String source = Query.string(ctx, "source").orElse("local");
        var items = switch (source) {
            case "local" -> checkpoints.listOfTenant(tenant).stream().map(this::view).toList();
            case "store" -> checkpoints.listStored(tenant).stream().map(CheckpointView::of).toList();
            default -> throw StasisException.invalid("source", "must be local or store, was '" + source + "'");
        };
        ctx.json(new ListView<>(items, null));
    }

    private CheckpointView view(Checkpoint c) {
        var spares = checkpoints.spares(c.id());
        return CheckpointView.of(c, checkpoints.upload(c.id()), new Views.SparesView(spares.wanted(), spares.ready()));
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
