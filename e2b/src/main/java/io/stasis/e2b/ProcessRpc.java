package io.stasis.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.e2b.ConnectRpc.Code;
import io.stasis.e2b.ConnectRpc.RpcException;
import io.stasis.sdk.BackgroundProcess;
import io.stasis.sdk.ConflictException;
import io.stasis.sdk.ExecOutputListener;
import io.stasis.sdk.NotFoundException;
import io.stasis.sdk.ProcessInfo;
import io.stasis.sdk.ProcessRequest;
import io.stasis.sdk.Processes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * envd's {@code process.Process} service onto Stasis's background processes: a started command
 * runs as a Stasis process (kept awake while it runs, as a VM's process would be), its output is
 * followed and sent as {@code data} events, base64 as protobuf's JSON has bytes, and its end as an
 * {@code end} event with the exit code. Signals, input, closing stdin and terminal resizes go to the
 * process by pid (or tag).
 */
final class ProcessRpc {
    /** How often a stream without output says it is alive (the SDK's fetch gives up on a silent body). */
    private static final Duration KEEPALIVE = Duration.ofSeconds(20);

    /**
     * Start: runs the command and streams its start, output and end. With a {@code deadline} (the
     * call's {@code Connect-Timeout-Ms}: the SDK's {@code timeoutMs}), a command still running then
     * is killed and the call ends {@code deadline_exceeded}, as envd does.
     */
    void start(EnvdCall call, JsonNode request, Optional<Duration> deadline, ConnectRpc.Stream stream) throws IOException {
        var config = request.path("process");
        String cmd = config.path("cmd").asText("");
        if (cmd.isEmpty()) throw new RpcException(Code.INVALID_ARGUMENT, "process.cmd is required");
        var argv = new ArrayList<String>();
        argv.add(cmd);
        for (var arg : config.path("args")) argv.add(arg.asText());
        var builder = ProcessRequest.builder(argv).user(call.user()).keepAlive(true)
                .cwd(config.hasNonNull("cwd") && !config.path("cwd").asText().isEmpty() ? call.resolve(config.path("cwd").asText()) : call.home());
        for (var env : config.path("envs").properties()) builder.env(env.getKey(), env.getValue().asText());
        if (request.hasNonNull("tag")) builder.tag(request.path("tag").asText());
        var pty = request.path("pty").path("size");
        if (!pty.isMissingNode()) builder.pty(pty.path("cols").asInt(80), pty.path("rows").asInt(24));
        else if (request.path("stdin").asBoolean(false)) builder.stdin(true);
        BackgroundProcess process = processes(call).start(builder.build());
        var timedOut = new java.util.concurrent.atomic.AtomicBoolean();
        Thread killer = deadline.map(after -> Thread.ofVirtual().name("e2b-deadline-" + process.pid()).start(() -> {
            LockSupport.parkNanos(after.toNanos());
            if (Thread.currentThread().isInterrupted()) return;
            timedOut.set(true);
            try {
                process.signal("KILL");
            } catch (RuntimeException ended) {
                timedOut.set(false); // it ended on its own just then
            }
        })).orElse(null);
        try {
            follow(process, stream, 0, 0, pty.isMissingNode() ? "stdout" : "pty", () -> {
                if (timedOut.get())
                    throw new RpcException(Code.DEADLINE_EXCEEDED, "the command ran longer than its timeout of " + deadline.get().toMillis()
                            + " ms and was killed");
            });
        } finally {
            if (killer != null) killer.interrupt();
        }
    }

    /** Connect: streams a running process's output from now on, and its end. */
    void connect(EnvdCall call, JsonNode request, ConnectRpc.Stream stream) throws IOException {
        var process = find(call, request.path("process"));
        var info = process.info();
        follow(process, stream, info.stdoutBytes(), info.stderrBytes(), info.pty() ? "pty" : "stdout", () -> { });
    }

    /** Streams the process's start, output and end; {@code beforeEnd} may end the call with an error instead of the end event. */
    private static void follow(BackgroundProcess process, ConnectRpc.Stream stream, long stdoutFrom, long stderrFrom, String stdoutKind,
                               Runnable beforeEnd) throws IOException {
        stream.send(event("start", Map.of("pid", process.pid())));
        var alive = Thread.ofVirtual().name("e2b-keepalive-" + process.pid()).start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                LockSupport.parkNanos(KEEPALIVE.toNanos());
                if (Thread.currentThread().isInterrupted()) return;
                try {
                    stream.send(event("keepalive", Map.of()));
                } catch (IOException e) {
                    return; // the client left: the follow below ends on its next write
                }
            }
        });
        ProcessInfo ended;
        try {
            ended = process.followToEnd(new ExecOutputListener() {
                @Override
                public void onStdout(byte[] chunk) {
                    send(stream, data(stdoutKind, chunk));
                }

                @Override
                public void onStderr(byte[] chunk) {
                    send(stream, data("stderr", chunk));
                }
            }, stdoutFrom, stderrFrom);
        } finally {
            alive.interrupt();
        }
        beforeEnd.run();
        stream.send(event("end", endOf(ended)));
    }

    private static void send(ConnectRpc.Stream stream, ObjectNode message) {
        try {
            stream.send(message);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // ends the follow: the client has gone
        }
    }

    private static ObjectNode data(String kind, byte[] chunk) {
        var data = ConnectRpc.JSON.createObjectNode();
        data.put(kind, Base64.getEncoder().encodeToString(chunk));
        return event("data", data);
    }

    private static ObjectNode event(String kind, Object value) {
        var event = ConnectRpc.JSON.createObjectNode();
        event.set(kind, ConnectRpc.JSON.valueToTree(value));
        var message = ConnectRpc.JSON.createObjectNode();
        message.set("event", event);
        return message;
    }

    /** envd's end event: the exit code (-1 when a signal ended it, as Go reports it), and the status as Go words it. */
    static Map<String, Object> endOf(ProcessInfo info) {
        int code = info.exitCode() == null || info.signal() != null ? -1 : info.exitCode();
        String status = info.signal() != null ? "signal: " + signalWord(info.signal())
                : "lost".equals(info.status()) ? "lost" : "exit status " + code;
        return Map.of("exitCode", code, "exited", info.signal() == null && !"lost".equals(info.status()), "status", status);
    }

    private static String signalWord(String signal) {
        return switch (signal) {
            case "KILL" -> "killed";
            case "TERM" -> "terminated";
            case "INT" -> "interrupt";
            case "HUP" -> "hangup";
            default -> signal.toLowerCase(java.util.Locale.ROOT);
        };
    }

    /** List: the running processes, as they were started. */
    Map<String, Object> list(EnvdCall call) {
        var items = new ArrayList<Map<String, Object>>();
        for (var process : processes(call).list()) {
            var info = process.info();
            if (!info.isRunning()) continue;
            List<String> cmd = info.cmd();
            var config = new java.util.LinkedHashMap<String, Object>();
            config.put("cmd", cmd.isEmpty() ? "" : cmd.getFirst());
            config.put("args", cmd.size() > 1 ? cmd.subList(1, cmd.size()) : List.of());
            config.put("envs", Map.of());
            if (info.cwd() != null) config.put("cwd", info.cwd());
            var item = new java.util.LinkedHashMap<String, Object>();
            item.put("config", config);
            item.put("pid", info.pid());
            if (info.tag() != null) item.put("tag", info.tag());
            items.add(item);
        }
        return Map.of("processes", items);
    }

    /** SendSignal: SIGKILL or SIGTERM; a process that has ended is not found, as in envd. */
    Map<String, Object> sendSignal(EnvdCall call, JsonNode request) {
        var signal = request.path("signal");
        String name = switch (signal.isNumber() ? String.valueOf(signal.asInt()) : signal.asText()) {
            case "9", "SIGNAL_SIGKILL" -> "KILL";
            case "15", "SIGNAL_SIGTERM" -> "TERM";
            default -> throw new RpcException(Code.INVALID_ARGUMENT, "unknown signal " + signal);
        };
        var process = find(call, request.path("process"));
        try {
            process.signal(name);
        } catch (ConflictException ended) {
            throw new RpcException(Code.NOT_FOUND, "process " + process.pid() + " is not running");
        }
        return Map.of();
    }

    /** SendInput: bytes to the process's stdin (or its terminal). */
    Map<String, Object> sendInput(EnvdCall call, JsonNode request) {
        find(call, request.path("process")).sendStdin(bytesOf(request.path("input")));
        return Map.of();
    }

    /**
     * StreamInput (client streaming): a {@code start} naming the process, then {@code data} events,
     * each written to its stdin (or terminal) as it arrives, and {@code keepalive}s, until the request ends.
     */
    Map<String, Object> streamInput(EnvdCall call, Iterable<JsonNode> messages) {
        BackgroundProcess process = null;
        for (JsonNode message : messages) {
            if (message.has("start")) process = find(call, message.path("start").path("process"));
            else if (message.has("data")) {
                if (process == null) throw new RpcException(Code.INVALID_ARGUMENT, "the first message names the process (start)");
                process.sendStdin(bytesOf(message.path("data").path("input")));
            } else if (!message.has("keepalive"))
                throw new RpcException(Code.INVALID_ARGUMENT, "a StreamInput message is a start, data or keepalive");
        }
        if (process == null) throw new RpcException(Code.INVALID_ARGUMENT, "the stream named no process (start)");
        return Map.of();
    }

    /** A {@code ProcessInput}'s bytes: its {@code stdin} or its {@code pty}, base64. */
    private static byte[] bytesOf(JsonNode input) {
        String encoded = input.hasNonNull("stdin") ? input.path("stdin").asText() : input.path("pty").asText("");
        try {
            return Base64.getDecoder().decode(encoded);
        } catch (IllegalArgumentException e) {
            throw new RpcException(Code.INVALID_ARGUMENT, "input is not base64");
        }
    }

    Map<String, Object> closeStdin(EnvdCall call, JsonNode request) {
        find(call, request.path("process")).closeStdin();
        return Map.of();
    }

    /** Update: a terminal's new size. */
    Map<String, Object> update(EnvdCall call, JsonNode request) {
        var size = request.path("pty").path("size");
        if (!size.isMissingNode()) find(call, request.path("process")).resize(size.path("cols").asInt(), size.path("rows").asInt());
        return Map.of();
    }

    private static Processes processes(EnvdCall call) {
        return call.client().sandboxes().processes(call.sandbox());
    }

    /** The process a {@code ProcessSelector} names: by pid, or the running one with the tag. */
    private static BackgroundProcess find(EnvdCall call, JsonNode selector) {
        if (selector.hasNonNull("pid")) {
            long pid = selector.path("pid").asLong();
            try {
                return processes(call).get(pid);
            } catch (NotFoundException e) {
                throw new RpcException(Code.NOT_FOUND, "process with pid " + pid + " not found");
            }
        }
        String tag = selector.path("tag").asText("");
        if (tag.isEmpty()) throw new RpcException(Code.INVALID_ARGUMENT, "a process is selected by pid or tag");
        Optional<BackgroundProcess> tagged = processes(call).list().stream()
                .filter(p -> tag.equals(p.info().tag()) && p.info().isRunning()).findFirst();
        return tagged.orElseThrow(() -> new RpcException(Code.NOT_FOUND, "process with tag " + tag + " not found"));
    }
}
