package io.stasis.server.http;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.Signal;
import io.stasis.core.policy.Durations;
import io.stasis.core.process.ProcessRequest;
import io.stasis.core.process.ProcessService;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import io.stasis.server.http.Views.ExitEvent;
import io.stasis.server.http.Views.ListView;
import io.stasis.server.http.Views.OutputView;
import io.stasis.server.http.Views.ProcessView;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Background processes: start, list, wait, read or follow output, signal, forget. */
final class ProcessRoutes {
    private static final Logger log = LoggerFactory.getLogger(ProcessRoutes.class);
    private static final int MAX_READ = 1 << 20;
    private static final int MAX_STDIN = 8 << 20;
    private static final long MAX_WAIT_MS = 24L * 3600 * 1000;

    private final ProcessService processes;

    ProcessRoutes(ProcessService processes) {
        this.processes = processes;
    }

    void register(RoutesConfig routes) {
        String base = "/v1/sandboxes/{id}/processes";
        routes.post(base, this::start, Access.EXEC);
        routes.get(base, ctx -> ctx.json(new ListView<>(processes.list(AccessGuard.sandboxId(ctx)).stream().map(ProcessView::of).toList(), null)), Access.SANDBOX_READ);
        routes.get(base + "/{pid}", ctx -> ctx.json(ProcessView.of(processes.get(AccessGuard.sandboxId(ctx), pid(ctx)))), Access.SANDBOX_READ);
        routes.get(base + "/{pid}/wait", this::await, Access.SANDBOX_READ);
        routes.get(base + "/{pid}/output", this::output, Access.SANDBOX_READ);
        routes.post(base + "/{pid}/signal", this::signal, Access.EXEC);
        routes.post(base + "/{pid}/stdin", this::writeStdin, Access.EXEC);
        routes.post(base + "/{pid}/stdin/close", ctx -> ctx.json(ProcessView.of(processes.closeStdin(AccessGuard.sandboxId(ctx), pid(ctx)))), Access.EXEC);
        routes.post(base + "/{pid}/resize", ctx -> {
            var size = Json.body(ctx, Bodies.TerminalBody.class).size();
            ctx.json(ProcessView.of(processes.resize(AccessGuard.sandboxId(ctx), pid(ctx), size)));
        }, Access.EXEC);
        routes.delete(base + "/{pid}", ctx -> {
            processes.forget(AccessGuard.sandboxId(ctx), pid(ctx));
            ctx.status(204);
        }, Access.EXEC);
    }

    private static long pid(Context ctx) {
        String raw = ctx.pathParam("pid");
        try {
            long pid = Long.parseLong(raw);
            if (pid < 1) throw new NumberFormatException();
            return pid;
        } catch (NumberFormatException e) {
            throw StasisException.invalid("pid", "must be a process id (a positive integer), was '" + raw + "'");
        }
    }

    private void start(Context ctx) {
        var body = Json.body(ctx, Bodies.StartProcess.class);
        if (body.cmd() == null) throw StasisException.invalid("cmd", "is required: the program and its arguments");
        if (Boolean.FALSE.equals(body.background()))
            throw StasisException.invalid("background", "processes started here always run in the background; use POST .../exec to run and wait");
        var request = new ProcessRequest(body.cmd(), Optional.ofNullable(body.cwd()), body.env() == null ? Map.of() : body.env(),
                Boolean.TRUE.equals(body.keepAlive()), Optional.ofNullable(body.keepAliveFor()).map(d -> Durations.parse("keepAliveFor", d)),
                Optional.ofNullable(body.tag()), Boolean.TRUE.equals(body.stdin()), Optional.ofNullable(body.pty()).map(Bodies.TerminalBody::size),
                Optional.ofNullable(body.user()));
        ctx.status(201).json(ProcessView.of(processes.start(AccessGuard.sandboxId(ctx), request)));
    }

    private void await(Context ctx) {
        long timeoutMs = Query.integer(ctx, "timeoutMs", 30_000);
        if (timeoutMs < 0 || timeoutMs > MAX_WAIT_MS) throw StasisException.invalid("timeoutMs", "must be between 0 and " + MAX_WAIT_MS);
        ctx.json(ProcessView.of(processes.await(AccessGuard.sandboxId(ctx), pid(ctx), Duration.ofMillis(timeoutMs))));
    }

    private void output(Context ctx) {
        var offsets = offsets(ctx);
        Encodings encoding = Encodings.parse("encoding", ctx.queryParam("encoding"));
        String sandbox = AccessGuard.sandboxId(ctx);
        long pid = pid(ctx);
        if (Query.bool(ctx, "follow", false) || SseStream.wanted(ctx)) {
            follow(ctx, sandbox, pid, offsets[0], offsets[1], encoding);
            return;
        }
        var out = processes.output(sandbox, pid, offsets[0], offsets[1], MAX_READ);
        boolean text = encoding == Encodings.UTF8 && Encodings.isValidUtf8(out.stdout()) && Encodings.isValidUtf8(out.stderr());
        Encodings used = text ? Encodings.UTF8 : Encodings.BASE64;
        ctx.json(new OutputView(used.encode(out.stdout()), out.stdoutStart(), out.stdoutOffset(), used.encode(out.stderr()),
                out.stderrStart(), out.stderrOffset(), used.wireName, ProcessView.of(out.process())));
    }

    /** Offsets from {@code ?offset=&stderrOffset=}, or from {@code Last-Event-ID: <stdout>,<stderr>} when a stream resumes. */
    private static long[] offsets(Context ctx) {
        String lastEventId = ctx.header("Last-Event-ID");
        if (lastEventId != null && lastEventId.matches("\\d+,\\d+")) {
            var parts = lastEventId.split(",");
            return new long[]{Long.parseLong(parts[0]), Long.parseLong(parts[1])};
        }
        long out = Query.integer(ctx, "offset", 0);
        long err = Query.integer(ctx, "stderrOffset", 0);
        if (out < 0 || err < 0) throw StasisException.invalid("offset", "must not be negative");
        return new long[]{out, err};
    }

    private void follow(Context ctx, String sandbox, long pid, long stdoutOffset, long stderrOffset, Encodings encoding) {
        var process = processes.get(sandbox, pid); // a missing process is a plain 404, before the stream begins
        try (var output = new SseOutput(ctx, encoding, stdoutOffset, stderrOffset)) {
            output.begin();
            var exit = processes.follow(sandbox, pid, stdoutOffset, stderrOffset, output);
            output.flush();
            output.event("exit", new ExitEvent(exit.map(e -> e.exitCode()).orElse(-1), exit.flatMap(e -> e.signal()).orElse(null),
                    false, Duration.between(process.startedAt(), Instant.now()).toMillis()));
        } catch (SseStream.ClientGone | CancellationException e) {
            log.atDebug().addKeyValue("sandbox", sandbox).addKeyValue("pid", pid).log("output stream client went away");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void writeStdin(Context ctx) throws IOException {
        byte[] data;
        try (var in = ctx.bodyInputStream()) {
            data = in.readNBytes(MAX_STDIN + 1);
        }
        if (data.length > MAX_STDIN)
            throw new StasisException(ErrorCode.PAYLOAD_TOO_LARGE, "at most " + MAX_STDIN + " bytes per write",
                    Map.of("limitBytes", MAX_STDIN));
        ctx.json(ProcessView.of(processes.writeStdin(AccessGuard.sandboxId(ctx), pid(ctx), data)));
    }

    private void signal(Context ctx) {
        var body = Json.body(ctx, Bodies.SignalProcess.class);
        if (body.signal() == null) throw StasisException.invalid("signal", "is required, e.g. \"TERM\"");
        ctx.json(ProcessView.of(processes.signal(AccessGuard.sandboxId(ctx), pid(ctx), Signal.parse(body.signal()))));
    }
}
