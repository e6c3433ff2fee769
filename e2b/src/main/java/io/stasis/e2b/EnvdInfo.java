package io.stasis.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.e2b.E2bErrors.E2bException;
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
        return E2bMetric.of(call.client(), call.client().sandboxes().get(call.sandbox()).info()).envd();
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
