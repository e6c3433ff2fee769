package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExecListener;
import io.stasis.core.exec.ExecRequest;
import io.stasis.core.exec.ExecResult;
import io.stasis.core.exec.ExecService;
import io.stasis.core.exec.OutputKind;
import io.stasis.core.sandbox.EnvVars;
import io.stasis.server.http.Views.ExecView;
import io.stasis.server.http.Views.ExitEvent;
import io.stasis.server.http.Views.OutputEvent;
import io.stasis.server.metrics.Metrics;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/** {@code POST /v1/sandboxes/{id}/exec}: run and wait, as JSON or streamed as Server-Sent Events. */
final class ExecRoutes {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ExecRoutes.class);
    private final ExecService exec;
    private final Metrics metrics;

    ExecRoutes(ExecService exec, Metrics metrics) {
        this.exec = exec;
        this.metrics = metrics;
    }

    void register(RoutesConfig routes) {
        routes.post("/v1/sandboxes/{id}/exec", this::exec);
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
                EnvVars.validateEnv("env", body.env() == null ? Map.of() : body.env()), stdin, timeout);
        String sandbox = ctx.pathParam("id");
        if (SseStream.wanted(ctx)) stream(ctx, sandbox, request, output);
        else {
            var result = exec.exec(sandbox, request);
            metrics.execFinished(result.duration());
            ctx.json(view(result, output));
        }
    }

    private void stream(Context ctx, String sandbox, ExecRequest request, Encodings encoding) {
        // Errors before the command starts still travel as normal JSON error responses: the
        // stream (and its 200) begins with the first output or the exit.
        var chunkers = new EnumMap<OutputKind, Utf8Chunker>(OutputKind.class);
        var sent = new EnumMap<OutputKind, Long>(OutputKind.class);
        var holder = new Object() {
            SseStream sse;

            SseStream sse() {
                if (sse == null) sse = SseStream.open(ctx);
                return sse;
            }
        };
        var listener = new ExecListener() {
            @Override
            public void output(OutputKind kind, byte[] data, long offsetAfter) {
                byte[] ready = encoding == Encodings.BASE64 ? data : chunkers.computeIfAbsent(kind, k -> new Utf8Chunker()).push(data);
                if (ready.length > 0) send(holder.sse(), kind, ready, sent.merge(kind, (long) ready.length, Long::sum), encoding);
            }

            @Override
            public boolean gone() {
                return holder.sse != null && holder.sse.clientGone();
            }
        };
        try {
            ExecResult result = exec.exec(sandbox, request, listener);
            metrics.execFinished(result.duration());
            for (var entry : chunkers.entrySet()) {
                byte[] rest = entry.getValue().flush();
                if (rest.length > 0) send(holder.sse(), entry.getKey(), rest, sent.merge(entry.getKey(), (long) rest.length, Long::sum), encoding);
            }
            holder.sse().event("exit", new ExitEvent(result.exit().exitCode(), result.exit().signal().orElse(null),
                    result.timedOut(), result.duration().toMillis()));
        } catch (SseStream.ClientGone | java.util.concurrent.CancellationException e) {
            log.atDebug().addKeyValue("sandbox", sandbox).log("exec stream client went away; the command was killed");
        } finally {
            if (holder.sse != null) holder.sse.close();
        }
    }

    private static void send(SseStream sse, OutputKind kind, byte[] bytes, long offsetAfter, Encodings encoding) {
        boolean text = encoding == Encodings.UTF8 && Encodings.isValidUtf8(bytes);
        Encodings used = text ? Encodings.UTF8 : Encodings.BASE64;
        sse.event(kind.wireName(), new OutputEvent(used.encode(bytes), offsetAfter, text ? null : "base64"));
    }

    private static ExecView view(ExecResult r, Encodings encoding) {
        return new ExecView(r.exit().exitCode(), r.exit().signal().orElse(null), encoding.encode(r.stdout()), encoding.encode(r.stderr()),
                encoding.wireName, r.stdoutTruncated(), r.stderrTruncated(), r.timedOut(), r.duration().toMillis());
    }
}
