package io.stasis.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.e2b.E2bErrors.E2bException;
import io.stasis.sdk.SandboxMetrics;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * envd's HTTP calls about the sandbox itself: its environment ({@code GET /envs}), its use of
 * resources ({@code GET /metrics}) and the orchestrator's {@code POST /init}. Stasis runs no agent in
 * the sandbox, so each is answered from what the service knows of it.
 */
final class EnvdInfo {
    /** What an init may carry that already holds here (Stasis issues the token; the clock is the host's). */
    private static final Set<String> INIT_ALREADY_HOLDS = Set.of("accessToken", "timestamp", "hyperloopIP");

    /** The environment its commands get: the variables it was created with. */
    Map<String, String> envs(EnvdCall call) {
        return call.client().sandboxes().get(call.sandbox()).info().env();
    }

    /** envd's {@code Metrics}: one reading of now, in envd's field names. */
    Map<String, Object> metrics(EnvdCall call) {
        var sandbox = call.client().sandboxes().get(call.sandbox()).info();
        SandboxMetrics reading = call.client().sandboxes().metrics(call.sandbox());
        var metrics = new LinkedHashMap<String, Object>();
        metrics.put("ts", reading.timestamp().getEpochSecond());
        metrics.put("cpu_count", (int) Math.ceil(reading.cpuCount()));
        metrics.put("cpu_used_pct", reading.cpuUsedPercent());
        metrics.put("mem_used", reading.memoryBytes());
        metrics.put("mem_used_mib", reading.memoryBytes() >> 20);
        metrics.put("mem_total", reading.memoryLimitBytes());
        metrics.put("mem_total_mib", reading.memoryLimitBytes() >> 20);
        if (sandbox.resources() != null && sandbox.resources().diskMb() != null) metrics.put("disk_total", (long) sandbox.resources().diskMb() << 20);
        return metrics;
    }

    /**
     * envd's init, which E2B's orchestrator sends after a start: accepted when it asks only what
     * already holds; environment variables, a default user or working directory set afterwards are
     * refused by name (Stasis sets a sandbox's environment at create, and the user per call).
     */
    void init(JsonNode body) {
        for (var field : body.properties()) {
            if (INIT_ALREADY_HOLDS.contains(field.getKey()) || field.getValue().isNull()) continue;
            if (field.getValue().isContainerNode() && field.getValue().isEmpty()) continue;
            throw new E2bException(400, "init: " + field.getKey() + " cannot be changed after create in Stasis"
                    + " (environment variables are set at create, the user and working directory per call)");
        }
    }
}
