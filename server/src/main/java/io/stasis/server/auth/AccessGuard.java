package io.stasis.server.auth;

import io.javalin.http.Context;
import io.javalin.security.RouteRole;
import io.javalin.websocket.WsContext;
import io.stasis.core.auth.Caller;
import io.stasis.core.auth.TokenScope;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.checkpoint.CheckpointService;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.lifecycle.SandboxService;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.volume.VolumeService;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Enforces each route's {@link Access} before its handler runs, in one place, so that no handler
 * can forget: the resource a route names must be the caller's tenant's, else it does not exist
 * (404, never 403: another tenant's ids leak nothing); a scoped token must be for that resource,
 * else the same 404, and hold the route's permission, else 403.
 * <p>The sandbox a route names by id or name is resolved here within the caller's tenant; handlers
 * read its id with {@link #sandboxId}, so a name never resolves in another tenant.
 */
public final class AccessGuard {
    private static final String SANDBOX_ATTRIBUTE = "stasis.sandbox";
    private static final String REFUSAL_ATTRIBUTE = "stasis.refusal";

    private final SandboxService sandboxes;
    private static final String VOLUME_ATTRIBUTE = "stasis.volume";
    private static final String CHECKPOINT_ATTRIBUTE = "stasis.checkpoint";

    private final CheckpointService checkpoints;
    private final VolumeService volumes;

    public AccessGuard(SandboxService sandboxes, CheckpointService checkpoints, VolumeService volumes) {
        this.sandboxes = sandboxes;
        this.checkpoints = checkpoints;
        this.volumes = volumes;
    }

    /** For a matched HTTP route: checks the {@link Access} it declares. */
    public void check(Context ctx) {
        if (!ctx.path().startsWith("/v1/")) return;
        check(ctx, declared(ctx.routeRoles(), ctx.method().name() + " " + ctx.endpoint().path));
    }

    /** Checks {@code access} for the request (also for WebSocket upgrades, whose roles Javalin does not pass on). */
    public void check(Context ctx, Access access) {
        if (access == Access.PUBLIC) return;
        Caller caller = BearerAuth.caller(ctx);
        switch (access.target()) {
            case NONE -> {
                if (access == Access.CALLER) return;
                if (access == Access.ROOT && !caller.isRoot())
                    throw forbidden(caller, "only the root key manages tenants and their keys");
                if (caller instanceof Caller.Token t)
                    throw forbidden(caller, "a scoped token acts on its " + t.token().scope().target().name().toLowerCase() + " "
                            + t.token().scope().resourceId() + " only; this call needs an API key");
            }
            case SANDBOX -> {
                String ref = ctx.pathParam("id");
                Sandbox sandbox = sandboxes.get(caller.tenant(), ref);
                requireScope(caller, access, sandbox.id(), () -> StasisException.sandboxNotFound(ref));
                ctx.attribute(SANDBOX_ATTRIBUTE, sandbox.id().value());
            }
            case CHECKPOINT -> {
                String raw = ctx.pathParam("cid");
                if (!CheckpointId.isValid(raw)) throw CheckpointService.notFound(raw);
                var id = new CheckpointId(raw);
                if (access == Access.CHECKPOINT_DELETE && !checkpoints.isLocal(id)) {
                    // A durable copy only the blob store holds: its descriptor names the tenant and the sandbox.
                    var stored = checkpoints.stored(caller.tenant(), id);
                    requireScope(caller, access, stored.sandbox(), () -> CheckpointService.notFound(raw));
                    return;
                }
                Checkpoint checkpoint = checkpoints.get(id);
                if (!tenantOf(checkpoint).equals(caller.tenant())) throw CheckpointService.notFound(raw);
                requireScope(caller, access, checkpoint.sandboxId(), () -> CheckpointService.notFound(raw));
                ctx.attribute(CHECKPOINT_ATTRIBUTE, checkpoint.id().value());
            }
            case VOLUME -> {
                String ref = ctx.pathParam("vid");
                var volume = volumes.get(caller.tenant(), ref);
                requireVolumeScope(caller, access, volume.id().value(), ref);
                ctx.attribute(VOLUME_ATTRIBUTE, volume.id().value());
            }
        }
    }

    private TenantId tenantOf(Checkpoint checkpoint) {
        try {
            return sandboxes.get(checkpoint.sandboxId().value()).tenant();
        } catch (StasisException e) {
            throw CheckpointService.notFound(checkpoint.id().value());
        }
    }

    private static void requireScope(Caller caller, Access access, SandboxId sandbox, Supplier<StasisException> notFound) {
        if (!(caller instanceof Caller.Token t)) return;
        if (!(t.token().scope() instanceof TokenScope.Sandbox scope) || !scope.id().equals(sandbox)) throw notFound.get();
        var needed = access.permission().orElseThrow();
        if (!t.token().permissions().contains(needed))
            throw new StasisException(ErrorCode.FORBIDDEN, "token " + t.token().id() + " lacks the permission '" + needed.wireName()
                    + "' this call needs", Map.of("token", t.token().id(), "permission", needed.wireName()));
    }

    /** For a token: its scope must be this volume (else 404) and it must hold the route's permission (else 403). */
    public static void requireVolumeScope(Caller caller, Access access, String volumeId, String ref) {
        if (!(caller instanceof Caller.Token t)) return;
        if (!(t.token().scope() instanceof TokenScope.Volume scope) || !scope.id().equals(volumeId))
            throw VolumeService.notFound(ref);
        var needed = access.permission().orElseThrow();
        if (!t.token().permissions().contains(needed))
            throw new StasisException(ErrorCode.FORBIDDEN, "token " + t.token().id() + " lacks the permission '" + needed.wireName()
                    + "' this call needs", Map.of("token", t.token().id(), "permission", needed.wireName()));
    }

    /** The id of the volume the route's {@code {vid}} names, as the guard resolved it in the caller's tenant. */
    public static String volumeId(Context ctx) {
        String id = ctx.attribute(VOLUME_ATTRIBUTE);
        if (id == null) throw new IllegalStateException("no volume was resolved for " + ctx.path() + ": the route must declare a volume access");
        return id;
    }

    private static Access declared(Set<RouteRole> roles, String route) {
        if (roles.size() == 1 && roles.iterator().next() instanceof Access access) return access;
        // Fails closed: a route that forgot to declare its access is refused to everyone.
        throw new StasisException(ErrorCode.INTERNAL, "route " + route + " declares no access rule");
    }

    private static StasisException forbidden(Caller caller, String why) {
        return new StasisException(ErrorCode.FORBIDDEN, why, Map.of("credential", caller.credentialId()));
    }

    /**
     * For a WebSocket upgrade: checks {@code access}, but keeps a refusal for the socket's connect
     * handler to report ({@link #sandboxId(io.javalin.websocket.WsContext)} throws it), since a
     * refused upgrade reaches clients as a bare status without the error's code and message.
     */
    public void checkUpgrade(Context ctx, Access access) {
        try {
            check(ctx, access);
        } catch (StasisException e) {
            ctx.attribute(REFUSAL_ATTRIBUTE, e);
        }
    }

    /** The sandbox the guard resolved for the request, if its route names one. */
    public static Optional<String> resolvedSandbox(Context ctx) {
        return Optional.ofNullable(ctx.attribute(SANDBOX_ATTRIBUTE));
    }

    /** The checkpoint (one this catalog records) the guard resolved for the request, if its route names one. */
    public static Optional<String> resolvedCheckpoint(Context ctx) {
        return Optional.ofNullable(ctx.attribute(CHECKPOINT_ATTRIBUTE));
    }

    /** The volume the guard resolved for the request, if its route names one. */
    public static Optional<String> resolvedVolume(Context ctx) {
        return Optional.ofNullable(ctx.attribute(VOLUME_ATTRIBUTE));
    }

    /** Keeps {@code refusal} for the socket's connect handler to report, as {@link #checkUpgrade} does with its own. */
    public static void refuseUpgrade(Context ctx, StasisException refusal) {
        if (ctx.attribute(REFUSAL_ATTRIBUTE) == null) ctx.attribute(REFUSAL_ATTRIBUTE, refusal);
    }

    /** The id of the sandbox the route's {@code {id}} names, as the guard resolved it in the caller's tenant. */
    public static String sandboxId(Context ctx) {
        return resolved(ctx.attribute(SANDBOX_ATTRIBUTE), ctx.path());
    }

    /** The same for a WebSocket, whose upgrade request the guard checked. */
    public static String sandboxId(WsContext ctx) {
        StasisException refusal = ctx.attribute(REFUSAL_ATTRIBUTE);
        if (refusal != null) throw refusal;
        return resolved(ctx.attribute(SANDBOX_ATTRIBUTE), ctx.pathParam("id"));
    }

    private static String resolved(String id, String ref) {
        if (id == null) throw new IllegalStateException("no sandbox was resolved for '" + ref + "': the route must declare a sandbox access");
        return id;
    }
}
