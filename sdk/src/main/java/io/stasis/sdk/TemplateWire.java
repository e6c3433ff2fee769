package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/** The JSON shapes of {@code POST /v1/templates}. */
final class TemplateWire {
    private TemplateWire() {
    }

    /** The request body: steps on a template ({@code from}), or a Dockerfile; null fields are left out. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Body(String name, String from, String dockerfile, List<Object> steps, List<String> cmd, String context,
                String startCmd, String readyCmd, Long readyTimeoutMs, Resources resources, NetworkPolicy network) {
    }

    /** {@code {"run": "...", "timeoutMs": n}} */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Run(String run, Long timeoutMs) {
    }

    /** {@code {"env": {"K": "V"}}} */
    record Env(Map<String, String> env) {
    }

    /** {@code {"workdir": "/app"}} */
    record Workdir(String workdir) {
    }

    /** {@code {"user": "root"}} */
    record User(String user) {
    }

    /** {@code {"copy": {"src": "...", "dest": "..."}}} */
    record Copy(Paths copy) {
    }

    record Paths(String src, String dest) {
    }

    /** A step as the API writes it: an object with exactly one of run, env, workdir, user or copy. */
    static Object step(BuildStep step) {
        return switch (step) {
            case BuildStep.Run r -> new Run(r.command(), r.timeout() == null ? null : r.timeout().toMillis());
            case BuildStep.Env e -> new Env(e.vars());
            case BuildStep.Workdir w -> new Workdir(w.path());
            case BuildStep.User u -> new User(u.user());
            case BuildStep.Copy c -> new Copy(new Paths(c.src(), c.dest()));
        };
    }
}
