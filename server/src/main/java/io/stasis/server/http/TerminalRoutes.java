package io.stasis.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.config.RoutesConfig;
import io.javalin.websocket.WsContext;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExecListener;
import io.stasis.core.exec.OutputKind;
import io.stasis.core.exec.Signal;
import io.stasis.core.process.ProcessRequest;
import io.stasis.core.process.ProcessService;
import io.stasis.core.spi.SpawnSpec.TerminalSize;
import io.stasis.server.auth.Access;
import io.stasis.server.auth.AccessGuard;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code GET /v1/sandboxes/{id}/terminal?cols=&rows=&cmd=&hangup=} upgraded to a WebSocket: a process
 * on a new terminal inside the sandbox (a login shell unless {@code cmd} names the argv, one parameter
 * per argument), or with {@code pid=} the terminal of a process already running, replayed from the
 * last {@value #SCROLLBACK} bytes (or from {@code offset=}). Binary frames carry bytes both ways; text
 * frames carry JSON control messages: {@code {"type": "resize", "cols": 120, "rows": 40}} and
 * {@code {"type": "eof"}} (the end of input, as {@code stdin/close}: Ctrl-D) from the client; {@code {"type": "started", "pid": 12}} and, before the server closes, {@code {"type":
 * "exit", "exitCode": 0}} from the server. Closing the socket hangs a new terminal up (SIGHUP), as
 * closing a terminal window does, unless {@code hangup=false}; an attached one is left running
 * unless {@code hangup=true}. The process is an ordinary background process: its output stays
 * readable through the processes API. A sandbox of another node has its terminal opened there, the
 * frames relayed ({@link TerminalRelay}).
 */
final class TerminalRoutes {
    private static final Logger log = LoggerFactory.getLogger(TerminalRoutes.class);
    static final long SCROLLBACK = 64 * 1024;
    private static final List<String> LOGIN_SHELL = List.of("sh", "-c", "if command -v bash >/dev/null 2>&1; then exec bash -l; else exec sh -l; fi");

    private final ProcessService processes;
    private final NodeForwarder forwarder;
    private final Map<String, Session> sessions = new ConcurrentHashMap<>();
    private final Map<String, TerminalRelay> relays = new ConcurrentHashMap<>();

    /** One terminal: its sandbox and process, and whether the socket is still open. Sends go one at a time. */
    private static final class Session {
        final String sandbox;
        final long pid;
        final boolean hangUpOnClose;
        volatile boolean open = true;

        Session(String sandbox, long pid, boolean hangUpOnClose) {
            this.sandbox = sandbox;
            this.pid = pid;
            this.hangUpOnClose = hangUpOnClose;
        }

        synchronized void send(WsContext ctx, ByteBuffer bytes) {
            ctx.send(bytes);
        }

        synchronized void send(WsContext ctx, String text) {
            ctx.send(text);
        }
    }

    static final String PATH = "/v1/sandboxes/{id}/terminal";

    TerminalRoutes(ProcessService processes, NodeForwarder forwarder) {
        this.processes = processes;
        this.forwarder = forwarder;
    }

    void register(RoutesConfig routes) {
        routes.ws(PATH, ws -> {
            ws.onConnect(this::connect);
            ws.onBinaryMessage(ctx -> input(ctx, ctx.data()));
            ws.onMessage(ctx -> control(ctx, ctx.message()));
            ws.onClose(ctx -> {
                var relay = relays.remove(ctx.sessionId());
                if (relay != null) relay.close(ctx.status(), ctx.reason());
                else hangUp(ctx);
            });
            ws.onError(ctx -> log.atDebug().addKeyValue("session", ctx.sessionId()).log("terminal socket error"));
        }, Access.EXEC);
    }

    private void connect(WsContext ctx) {
        try {
            String sandbox = AccessGuard.sandboxId(ctx);
            var remote = NodeForwarder.remoteNode(ctx);
            if (remote.isPresent()) {
                try {
                    relays.put(ctx.sessionId(), forwarder.relayTerminal(ctx, remote.get()));
                } catch (Exception e) {
                    throw new StasisException(ErrorCode.NODE_UNAVAILABLE, "sandbox " + sandbox + " is on node " + remote.get().name()
                            + ", whose terminal did not open: " + e.getMessage(), Map.of("sandbox", sandbox, "node", remote.get().name()));
                }
                return;
            }
            String attach = ctx.queryParam("pid");
            Optional<Boolean> hangup = Optional.ofNullable(ctx.queryParam("hangup")).map(TerminalRoutes::bool);
            Session session;
            long from;
            if (attach != null) {
                var process = processes.get(sandbox, integer(attach, 0, "pid"));
                if (!process.terminal() || !process.running())
                    throw new StasisException(ErrorCode.INVALID_STATE, "process " + process.pid() + " is not a running process on a terminal",
                            Map.of("sandbox", sandbox, "pid", process.pid()));
                session = new Session(sandbox, process.pid(), hangup.orElse(false));
                from = ctx.queryParam("offset") != null ? integer(ctx.queryParam("offset"), 0, "offset")
                        : Math.max(0, process.stdoutBytes() - SCROLLBACK);
                if (ctx.queryParam("cols") != null || ctx.queryParam("rows") != null)
                    processes.resize(sandbox, process.pid(), size(ctx));
            } else {
                List<String> argv = ctx.queryParams("cmd").isEmpty() ? LOGIN_SHELL : ctx.queryParams("cmd");
                var process = processes.start(sandbox, new ProcessRequest(argv, Optional.empty(), Map.of(), false, Optional.empty(),
                        Optional.of("terminal"), true, Optional.of(size(ctx))));
                session = new Session(sandbox, process.pid(), hangup.orElse(true));
                from = 0;
            }
            sessions.put(ctx.sessionId(), session);
            session.send(ctx, Json.write(Map.of("type", "started", "pid", session.pid)));
            ctx.enableAutomaticPings();
            Thread.ofVirtual().name("terminal-" + session.pid).start(() -> relay(ctx, session, from));
        } catch (StasisException e) {
            ctx.send(Json.write(Map.of("type", "error", "code", e.code().wireName(), "message", e.getMessage())));
            ctx.closeSession(1008, e.code().wireName());
        }
    }

    /** Sends the terminal's output as it comes; ends the session when the process ends. */
    private void relay(WsContext ctx, Session session, long from) {
        ExecListener listener = new ExecListener() {
            @Override
            public void output(OutputKind kind, byte[] data, long offsetAfter) {
                session.send(ctx, ByteBuffer.wrap(data));
            }

            @Override
            public boolean gone() {
                return !session.open;
            }
        };
        try {
            var exit = processes.follow(session.sandbox, session.pid, from, 0, listener);
            if (session.open) {
                session.send(ctx, Json.write(Map.of("type", "exit", "exitCode", exit.map(e -> e.exitCode()).orElse(-1))));
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
        var relay = relays.get(ctx.sessionId());
        if (relay != null) {
            relay.binary(data);
            return;
        }
        var session = sessions.get(ctx.sessionId());
        if (session == null) return;
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        try {
            processes.writeStdin(session.sandbox, session.pid, bytes);
        } catch (StasisException e) {
            // typed after the process ended, or it does not read: the client hears of it, the socket stays
            session.send(ctx, Json.write(Map.of("type", "error", "code", e.code().wireName(), "message", e.getMessage())));
        }
    }

    private void control(WsContext ctx, String message) {
        var relay = relays.get(ctx.sessionId());
        if (relay != null) {
            relay.text(message);
            return;
        }
        var session = sessions.get(ctx.sessionId());
        if (session == null) return;
        try {
            JsonNode json = Json.MAPPER.readTree(message);
            String type = json.path("type").asText();
            if ("resize".equals(type))
                processes.resize(session.sandbox, session.pid, new TerminalSize(json.path("cols").asInt(), json.path("rows").asInt()));
            else if ("eof".equals(type)) processes.closeStdin(session.sandbox, session.pid);
            else session.send(ctx, Json.write(Map.of("type", "error", "code", "invalid_request", "message", "unknown control message")));
        } catch (StasisException e) {
            session.send(ctx, Json.write(Map.of("type", "error", "code", e.code().wireName(), "message", e.getMessage())));
        } catch (IOException e) {
            session.send(ctx, Json.write(Map.of("type", "error", "code", "malformed_request", "message", "control messages are JSON")));
        }
    }

    private void hangUp(WsContext ctx) {
        var session = sessions.remove(ctx.sessionId());
        if (session == null) return;
        session.open = false;
        if (!session.hangUpOnClose) return;
        try {
            var process = processes.get(session.sandbox, session.pid);
            if (process.running()) processes.signal(session.sandbox, session.pid, Signal.HUP);
        } catch (StasisException e) {
            log.atDebug().addKeyValue("pid", session.pid).log("terminal already gone at hang-up");
        }
    }

    private static TerminalSize size(WsContext ctx) {
        return new TerminalSize(dimension(ctx, "cols", 80), dimension(ctx, "rows", 24));
    }

    /** Out-of-range values stay out of range (the size refuses them) instead of wrapping around. */
    private static int dimension(WsContext ctx, String name, int fallback) {
        return (int) Math.clamp(integer(ctx.queryParam(name), fallback, name), 0, 100_000);
    }

    private static boolean bool(String value) {
        return switch (value) {
            case "true" -> true;
            case "false" -> false;
            default -> throw StasisException.invalid("hangup", "must be true or false");
        };
    }

    private static long integer(String value, long fallback, String name) {
        if (value == null || value.isBlank()) return fallback;
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw StasisException.invalid(name, "must be an integer");
        }
    }
}
