package io.stasis.server.auth;

import io.javalin.security.RouteRole;
import io.stasis.core.auth.Permission;
import java.util.Optional;

/**
 * What a route asks of its caller. Every {@code /v1} route declares exactly one; the
 * {@link AccessGuard} enforces it before the handler runs, and a test holds every route to it.
 * <ul>
 *   <li>{@link #PUBLIC}: anyone;</li>
 *   <li>{@link #ROOT}: the operator's root key only (tenants and their keys);</li>
 *   <li>{@link #TENANT}: any API key, acting on its own tenant's collection (list, create, secrets,
 *       tokens); scoped tokens are refused;</li>
 *   <li>{@link #CALLER}: any credential the service knows, about itself only;</li>
 *   <li>the others: one sandbox (named by {@code {id}}), one checkpoint (by {@code {cid}}) or one volume (by {@code {vid}}) of the
 *       caller's tenant, and for a scoped token, that resource and that permission.</li>
 * </ul>
 */
public enum Access implements RouteRole {
    PUBLIC(Target.NONE, null),
    ROOT(Target.NONE, null),
    TENANT(Target.NONE, null),
    CALLER(Target.NONE, null),
    SANDBOX_READ(Target.SANDBOX, Permission.SANDBOX_READ),
    SANDBOX_LIFECYCLE(Target.SANDBOX, Permission.SANDBOX_LIFECYCLE),
    SANDBOX_DELETE(Target.SANDBOX, Permission.SANDBOX_DELETE),
    EXEC(Target.SANDBOX, Permission.EXEC),
    FILES_READ(Target.SANDBOX, Permission.FILES_READ),
    FILES_WRITE(Target.SANDBOX, Permission.FILES_WRITE),
    CHECKPOINTS(Target.SANDBOX, Permission.CHECKPOINTS),
    NETWORK(Target.SANDBOX, Permission.NETWORK),
    PREVIEWS(Target.SANDBOX, Permission.PREVIEWS),
    CHECKPOINT_READ(Target.CHECKPOINT, Permission.SANDBOX_READ),
    CHECKPOINT_DELETE(Target.CHECKPOINT, Permission.CHECKPOINTS),
    CHECKPOINT_SYNC(Target.CHECKPOINT, Permission.CHECKPOINTS),
    CHECKPOINT_SPARES(Target.CHECKPOINT, Permission.CHECKPOINTS),
    VOLUME_READ(Target.VOLUME, Permission.VOLUME_READ),
    VOLUME_WRITE(Target.VOLUME, Permission.VOLUME_WRITE);

    /** The resource a route acts on, by the path parameter that names it. */
    enum Target { NONE, SANDBOX, CHECKPOINT, VOLUME }

    private final Target target;
    private final Permission permission;

    Access(Target target, Permission permission) {
        this.target = target;
        this.permission = permission;
    }

    Target target() {
        return target;
    }

    /** What a scoped token needs for this route; empty where tokens may not come at all. */
    Optional<Permission> permission() {
        return Optional.ofNullable(permission);
    }
}
