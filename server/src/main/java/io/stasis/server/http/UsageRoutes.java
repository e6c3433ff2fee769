package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.stasis.core.lifecycle.SandboxUsage;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import java.time.Instant;

/** What a sandbox uses now: {@code GET /v1/sandboxes/{id}/metrics} (CPU share since the last reading, memory in RAM and swap, disk). */
final class UsageRoutes {
    private final SandboxUsage usage;

    UsageRoutes(SandboxUsage usage) {
        this.usage = usage;
    }

    record MetricsView(Instant timestamp, double cpuCount, double cpuUsedPercent, double cpuSeconds, long memoryBytes, long swappedBytes,
                       long memoryLimitBytes, long diskBytes, long diskInheritedBytes, long diskLimitBytes) {
        static MetricsView of(SandboxUsage.Reading r) {
            return new MetricsView(r.at(), r.cpus(), Math.round(r.cpuUsedPercent() * 100) / 100.0, r.cpuTime().toNanos() / 1e9,
                    r.memoryBytes(), r.swappedBytes(), r.memoryLimitBytes(), r.disk().totalBytes(), r.disk().inheritedBytes(), r.diskLimitBytes());
        }
    }

    void register(RoutesConfig routes) {
        routes.get("/v1/sandboxes/{id}/metrics", ctx -> ctx.json(MetricsView.of(usage.read(AccessGuard.sandboxId(ctx)))), Access.SANDBOX_READ);
    }
}
