package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExecRequest;
import io.stasis.core.exec.ExecResult;
import io.stasis.core.exec.ExecService;
import io.stasis.core.sandbox.EnvVars;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.http.Views.ExecView;
import io.stasis.server.http.Views.ExitEvent;
import io.stasis.server.metrics.Metrics;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code POST /v1/sandboxes/{id}/exec}: run and wait, as JSON or streamed as Server-Sent Events. */
final class ExecRoutes {
    private static final Logger log = LoggerFactory.getLogger(ExecRoutes.class);
    private final ExecService exec;
    private final Metrics metrics;

    ExecRoutes(ExecService exec, Metrics metrics) {
        this.exec = exec;
        this.metrics = metrics;
    }

    void register(RoutesConfig routes) {
        routes.post("/v1/sandboxes/{id}/exec", this::exec, Access.EXEC);
    }

    private void exec(Context ctx) {
        var body = Json.body(ctx, Bodies.Exec.class);
        if (body.cmd() == null) throw StasisException.invalid("cmd", "is required: the program and its arguments, e.g. [\"ls\", \"-l\"]");
        Encodings output = Encodings.parse("encoding", body.encoding());
        Optional<byte[]> stdin = Optional.ofNullable(body.stdin())
                .map(s -> Encodings.parse("stdinEncoding", body.stdinEncoding()).decode("stdin", s));
        Duration timeout = body.timeoutMs() == null ? ExecRequest.DEFAULT_TIMEOUT : Duration.ofMillis(body.timeoutMs());
        if (body.timeoutMs() != null && body.timeoutMs() <= 0) throw StasisException.invalid("timeoutMs", "must be positive");
        var request = new ExecRequest(body.cmd(), Optional.ofNullable(body.cwd()),
                EnvVars.validateEnv("env", body.env() == null ? Map.of() : body.env()), stdin, timeout, Optional.ofNullable(body.user()));
        String sandbox = AccessGuard.sandboxId(ctx);
        if (SseStream.wanted(ctx)) stream(ctx, sandbox, request, output);
        else {
            var result = exec.exec(sandbox, request);
            metrics.execFinished(result.duration());
            ctx.json(view(result, output));
        }
    }

    private void stream(Context ctx, String sandbox, ExecRequest request, Encodings encoding) {
        try (var output = new SseOutput(ctx, encoding, 0, 0)) {
            ExecResult result = exec.exec(sandbox, request, output);
            metrics.execFinished(result.duration());
            output.flush();
            output.event("exit", new ExitEvent(result.exit().exitCode(), result.exit().signal().orElse(null),
                    result.timedOut(), result.duration().toMillis()));
        } catch (SseStream.ClientGone | CancellationException e) {
            log.atDebug().addKeyValue("sandbox", sandbox).log("exec stream client went away; the command was killed");
        }
    }

    private static ExecView view(ExecResult r, Encodings encoding) {
        return new ExecView(r.exit().exitCode(), r.exit().signal().orElse(null), encoding.encode(r.stdout()), encoding.encode(r.stderr()),
                encoding.wireName, r.stdoutTruncated(), r.stderrTruncated(), r.timedOut(), r.duration().toMillis());
    }
}
