package io.stasis.core.auth;

import io.stasis.core.error.StasisException;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * What a scoped token may do with the one sandbox or volume it is for. A tenant's API keys may do
 * everything with the tenant's resources; tokens only what they list.
 */
public enum Permission {
    /** See the sandbox, its processes and their output, checkpoints, forks, network policy, previews and events. */
    SANDBOX_READ("sandbox:read", Target.SANDBOX),
    /** Pause, resume, hibernate, stop, start; change the lifecycle policy. */
    SANDBOX_LIFECYCLE("sandbox:lifecycle", Target.SANDBOX),
    SANDBOX_DELETE("sandbox:delete", Target.SANDBOX),
    /** Run commands and processes, write their stdin, signal them, open terminals. */
    EXEC("exec", Target.SANDBOX),
    FILES_READ("files:read", Target.SANDBOX),
    FILES_WRITE("files:write", Target.SANDBOX),
    /** Take and delete checkpoints, fork. */
    CHECKPOINTS("checkpoints", Target.SANDBOX),
    /** Replace the egress policy. */
    NETWORK("network", Target.SANDBOX),
    /** Create and delete preview URLs. */
    PREVIEWS("previews", Target.SANDBOX),
    VOLUME_READ("volume:read", Target.VOLUME),
    VOLUME_WRITE("volume:write", Target.VOLUME);

    /** What kind of resource a permission applies to. */
    public enum Target { SANDBOX, VOLUME }

    private final String wireName;
    private final Target target;

    Permission(String wireName, Target target) {
        this.wireName = wireName;
        this.target = target;
    }

    public String wireName() {
        return wireName;
    }

    public Target target() {
        return target;
    }

    /** @throws StasisException {@code invalid_request} listing the permissions there are */
    public static Permission parse(String wire, String field) {
        for (var p : values()) if (p.wireName.equals(wire)) return p;
        throw StasisException.invalid(field, "'" + wire + "' is not a permission; there are "
                + Arrays.stream(values()).map(Permission::wireName).collect(Collectors.joining(", ")));
    }

    @Override
    public String toString() {
        return wireName;
    }
}
