package io.stasis.core.audit;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.Optional;

/** One line of the audit log: an API call, or an egress decision. Never a secret, key or token value. */
public sealed interface AuditEntry {
    Instant at();

    /** The tenant it concerns; empty for a call whose credential was refused. */
    Optional<TenantId> tenant();

    /** {@code call} or {@code egress}, as the log and the API name the kind. */
    String kind();

    /**
     * An API call and its outcome.
     *
     * @param credentialId the public id of the key or token it presented; empty when it presented none that the service knows
     * @param route        the route it matched ({@code /v1/sandboxes/{id}/exec}), or the path when none matched
     * @param resource     the id or name of the resource in its path, if any
     * @param status       the HTTP status answered
     * @param outcome      {@code ok}, or the error code answered
     */
    record Call(Instant at, Optional<TenantId> tenant, Optional<String> credentialId, boolean root, String method, String route,
                String path, Optional<String> resource, int status, String outcome, String requestId) implements AuditEntry {
        @Override
        public String kind() {
            return "call";
        }
    }

    /**
     * A lookup or connection of a sandbox, allowed or refused, with the rule that decided.
     *
     * @param protocol {@code dns}, {@code http}, {@code tls}, {@code tcp} or {@code udp}
     */
    record Egress(Instant at, Optional<TenantId> tenant, SandboxId sandbox, boolean allowed, Optional<String> domain,
                  Optional<String> address, int port, String protocol, String rule) implements AuditEntry {
        @Override
        public String kind() {
            return "egress";
        }
    }
}
