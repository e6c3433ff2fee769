package io.stasis.core.audit;

import io.stasis.core.network.EgressAttempt;
import io.stasis.core.network.EgressDecisions;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.AuditLog;
import io.stasis.core.spi.SandboxCatalog;
import io.stasis.core.tenant.TenantId;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every egress decision into the audit log, with its sandbox's tenant (looked up once per sandbox;
 * sandboxes are never moved between tenants), then passed on to {@code next} (the network's own
 * accounting of refusals).
 */
public final class EgressAudit implements EgressDecisions {
    /** Sandboxes whose tenant is remembered at most; the map starts over past it. */
    private static final int MAX_REMEMBERED = 100_000;

    private final AuditLog log;
    private final SandboxCatalog sandboxes;
    private final Clock clock;
    private final EgressDecisions next;
    private final Map<SandboxId, TenantId> tenants = new ConcurrentHashMap<>();

    public EgressAudit(AuditLog log, SandboxCatalog sandboxes, Clock clock, EgressDecisions next) {
        this.log = log;
        this.sandboxes = sandboxes;
        this.clock = clock;
        this.next = next;
    }

    @Override
    public void allowed(SandboxId sandbox, EgressAttempt attempt) {
        append(sandbox, attempt, true);
        next.allowed(sandbox, attempt);
    }

    @Override
    public void denied(SandboxId sandbox, EgressAttempt attempt) {
        append(sandbox, attempt, false);
        next.denied(sandbox, attempt);
    }

    private void append(SandboxId sandbox, EgressAttempt attempt, boolean allowed) {
        log.append(new AuditEntry.Egress(clock.instant(), tenantOf(sandbox), sandbox, allowed, attempt.domain(), attempt.address(),
                attempt.port(), attempt.protocol(), attempt.rule()));
    }

    private Optional<TenantId> tenantOf(SandboxId sandbox) {
        var known = tenants.get(sandbox);
        if (known != null) return Optional.of(known);
        var found = sandboxes.find(sandbox).map(s -> s.tenant());
        found.ifPresent(t -> {
            if (tenants.size() >= MAX_REMEMBERED) tenants.clear();
            tenants.put(sandbox, t);
        });
        return found;
    }
}
