package io.stasis.core.audit;

import io.stasis.core.error.StasisException;
import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.Optional;

/**
 * Which entries of the audit log to list, newest first; every field present must match.
 *
 * @param tenant       only this tenant's (a tenant's own key always sets it; the root key may)
 * @param kind         {@code call} or {@code egress}
 * @param since        at or after this time
 * @param until        before this time
 * @param sandbox      calls whose resource, or egress of the sandbox, is this id
 * @param credentialId calls with this key or token
 * @param limit        at most this many (1-1000)
 * @param cursor       where an earlier page ended
 */
public record AuditQuery(Optional<TenantId> tenant, Optional<String> kind, Optional<Instant> since, Optional<Instant> until,
                         Optional<String> sandbox, Optional<String> credentialId, int limit, Optional<String> cursor) {
    public static final int MAX_LIMIT = 1000;

    public AuditQuery {
        if (limit < 1 || limit > MAX_LIMIT) throw StasisException.invalid("limit", "must be 1 to " + MAX_LIMIT + ", was " + limit);
        kind.ifPresent(k -> {
            if (!k.equals("call") && !k.equals("egress")) throw StasisException.invalid("kind", "must be call or egress, was '" + k + "'");
        });
    }

    public static AuditQuery all(int limit) {
        return new AuditQuery(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                limit, Optional.empty());
    }

    public AuditQuery withTenant(TenantId only) {
        return new AuditQuery(Optional.of(only), kind, since, until, sandbox, credentialId, limit, cursor);
    }

    public AuditQuery withCursor(String next) {
        return new AuditQuery(tenant, kind, since, until, sandbox, credentialId, limit, Optional.of(next));
    }

    /** Whether {@code entry} is one this query lists (the cursor aside). */
    public boolean matches(AuditEntry entry) {
        if (tenant.isPresent() && !entry.tenant().equals(tenant)) return false;
        if (kind.isPresent() && !entry.kind().equals(kind.get())) return false;
        if (since.isPresent() && entry.at().isBefore(since.get())) return false;
        if (until.isPresent() && !entry.at().isBefore(until.get())) return false;
        return switch (entry) {
            case AuditEntry.Call call -> sandbox.map(s -> call.resource().equals(Optional.of(s))).orElse(true)
                    && credentialId.map(c -> call.credentialId().equals(Optional.of(c))).orElse(true);
            case AuditEntry.Egress egress -> sandbox.map(s -> egress.sandbox().value().equals(s)).orElse(true) && credentialId.isEmpty();
        };
    }
}
