package io.stasis.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.config.RoutesConfig;
import io.javalin.websocket.WsContext;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExecListener;
import io.stasis.core.exec.OutputKind;
import io.stasis.core.exec.Signal;
import io.stasis.core.process.ProcessRequest;
import io.stasis.core.process.ProcessService;
import io.stasis.core.spi.SpawnSpec.TerminalSize;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /v1/sandboxes/{id}/terminal?cols=&rows=&cmd=} upgraded to a WebSocket: a process on a
 * terminal inside the sandbox (a login shell unless {@code cmd} names the argv, one parameter per
 * argument). Binary frames carry bytes both ways; text frames carry JSON control messages:
 * {@code {"type": "resize", "cols": 120, "rows": 40}} from the client, {@code {"type": "exit",
 * "exitCode": 0}} from the server before it closes. Closing the socket hangs the terminal up
 * (SIGHUP), as closing a terminal window does. The process is an ordinary background process: its
 * output stays readable through the processes API.
 */
final class TerminalRoutes {
    private static final Logger log = LoggerFactory.getLogger(TerminalRoutes.class);
    private static final List<String> LOGIN_SHELL = List.of("sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi");

    private final ProcessService processes;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();

    /** One terminal: its sandbox and process, and whether the socket is still open. */
    private static final class Session {
        final String sandbox;
        final long pid;
        volatile boolean open = true;

        Session(String sandbox, long pid) {
            this.sandbox = sandbox;
            this.pid = pid;
        }
    }

    TerminalRoutes(ProcessService processes) {
        this.processes = processes;
    }

    void register(RoutesConfig routes) {
        routes.ws("/v1/sandboxes/{id}/terminal", ws -> {
            ws.onConnect(this::connect);
            ws.onBinaryMessage(ctx -> input(ctx, ctx.data()));
            ws.onMessage(ctx -> control(ctx, ctx.message()));
            ws.onClose(this::hangUp);
            ws.onError(ctx -> log.atDebug().addKeyValue("session", ctx.sessionId()).log("terminal socket error"));
        });
    }

    private void connect(WsContext ctx) {
        try {
            int cols = integer(ctx.queryParam("cols"), 80, "cols");
            int rows = integer(ctx.queryParam("rows"), 24, "rows");
            List<String> argv = ctx.queryParams("cmd").isEmpty() ? LOGIN_SHELL : ctx.queryParams("cmd");
            String sandbox = ctx.pathParam("id");
            var process = processes.start(sandbox, new ProcessRequest(argv, Optional.empty(), Map.of(), false, Optional.empty(),
                    Optional.of("terminal"), true, Optional.of(new TerminalSize(cols, rows))));
            var session = new Session(sandbox, process.pid());
            sessions.put(ctx.sessionId(), session);
            ctx.enableAutomaticPings();
            Thread.ofVirtual().name("terminal-" + process.pid()).start(() -> relay(ctx, session));
        } catch (StasisException e) {
            ctx.send(Json.write(Map.of("type", "error", "code", e.code().wireName(), "message", e.getMessage())));
            ctx.closeSession(1008, e.code().wireName());
        }
    }

    /** Sends the terminal's output as it comes; ends the session when the process ends. */
    private void relay(WsContext ctx, Session session) {
        ExecListener listener = new ExecListener() {
            @Override
            public void output(OutputKind kind, byte[] data, long offsetAfter) {
                ctx.send(ByteBuffer.wrap(data));
            }

            @Override
            public boolean gone() {
                return !session.open;
            }
        };
        try {
            var exit = processes.follow(session.sandbox, session.pid, 0, 0, listener);
            if (session.open) {
                ctx.send(Json.write(Map.of("type", "exit", "exitCode", exit.map(e -> e.exitCode()).orElse(-1))));
                ctx.closeSession(1000, "exited");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.atDebug().addKeyValue("pid", session.pid).setCause(e).log("terminal relay ended");
            if (session.open) ctx.closeSession(1011, "relay failed");
        }
    }

    private void input(WsContext ctx, ByteBuffer data) {
        var session = sessions.get(ctx.sessionId());
        if (session == null) return;
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        processes.writeStdin(session.sandbox, session.pid, bytes);
    }

    private void control(WsContext ctx, String message) {
        var session = sessions.get(ctx.sessionId());
        if (session == null) return;
        try {
            JsonNode json = Json.MAPPER.readTree(message);
            if ("resize".equals(json.path("type").asText()))
                processes.resize(session.sandbox, session.pid, new TerminalSize(json.path("cols").asInt(), json.path("rows").asInt()));
            else ctx.send(Json.write(Map.of("type", "error", "code", "invalid_request", "message", "unknown control message")));
        } catch (StasisException e) {
            ctx.send(Json.write(Map.of("type", "error", "code", e.code().wireName(), "message", e.getMessage())));
        } catch (java.io.IOException e) {
            ctx.send(Json.write(Map.of("type", "error", "code", "malformed_request", "message", "control messages are JSON")));
        }
    }

    private void hangUp(WsContext ctx) {
        var session = sessions.remove(ctx.sessionId());
        if (session == null) return;
        session.open = false;
        try {
            var process = processes.get(session.sandbox, session.pid);
            if (process.running()) processes.signal(session.sandbox, session.pid, Signal.HUP);
        } catch (StasisException e) {
            log.atDebug().addKeyValue("pid", session.pid).log("terminal already gone at hang-up");
        }
    }

    private static int integer(String value, int fallback, String name) {
        if (value == null || value.isBlank()) return fallback;
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw StasisException.invalid(name, "must be an integer");
        }
    }
}
