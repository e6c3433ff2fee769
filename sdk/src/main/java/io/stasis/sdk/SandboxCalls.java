package io.stasis.sdk;

import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/** The calls made on one sandbox by id or name; shared by {@link Sandbox} and {@link Sandboxes}. */
final class SandboxCalls {
    private final HttpTransport transport;
    private final String idOrName;
    private final String base;

    SandboxCalls(HttpTransport transport, String idOrName) {
        if (idOrName == null || idOrName.isBlank()) throw new IllegalArgumentException("sandbox id or name is empty");
        this.transport = transport;
        this.idOrName = idOrName;
        this.base = "/v1/sandboxes/" + Query.encode(idOrName);
    }

    String idOrName() {
        return idOrName;
    }

    String path(String suffix) {
        return base + suffix;
    }

    HttpTransport transport() {
        return transport;
    }

    SandboxInfo get() {
        return transport.json(transport.call("GET", base), SandboxInfo.class);
    }

    void delete() {
        transport.discard(transport.call("DELETE", base));
    }

    /**
     * {@code POST .../pause}, {@code resume}, {@code hibernate}, {@code stop}, {@code start}: no body, the sandbox
     * back. Idempotent by the API (already in the target state: 200 unchanged), so retried like a GET.
     */
    SandboxInfo action(String verb) {
        return transport.json(transport.call("POST", base + "/" + verb).idempotent()
                .timeout(transport.operationTimeout()), SandboxInfo.class);
    }

    /** {@code POST .../resume} with {@code {"expectGeneration": N}}: 409 {@code generation_mismatch} if the sandbox is at an older one. */
    SandboxInfo resume(long expectGeneration) {
        return transport.json(transport.jsonCall("POST", base + "/resume", Map.of("expectGeneration", expectGeneration))
                .idempotent().timeout(transport.operationTimeout()), SandboxInfo.class);
    }

    SandboxInfo updateLifecycle(LifecycleUpdate update) {
        Objects.requireNonNull(update, "update");
        return transport.json(transport.jsonCall("PATCH", base + "/lifecycle", update), SandboxInfo.class);
    }

    NetworkInfo network() {
        return transport.json(transport.call("GET", base + "/network"), NetworkInfo.class);
    }

    SandboxMetrics metrics() {
        return transport.json(transport.call("GET", base + "/metrics"), SandboxMetrics.class);
    }

    NetworkInfo updateNetwork(NetworkPolicy policy) {
        Objects.requireNonNull(policy, "policy");
        return transport.json(transport.jsonCall("PUT", base + "/network", policy), NetworkInfo.class);
    }

    Checkpoint checkpoint(CheckpointRequest request) {
        Objects.requireNonNull(request, "request");
        var info = transport.json(transport.jsonCall("POST", base + "/checkpoints", request)
                .timeout(transport.operationTimeout()), CheckpointInfo.class);
        return new Checkpoint(info, transport);
    }

    List<Checkpoint> checkpoints() {
        return all(base + "/checkpoints", CheckpointInfo.class).stream()
                .map(info -> new Checkpoint(info, transport)).toList();
    }

    List<Sandbox> fork(ForkRequest request) {
        Objects.requireNonNull(request, "request");
        var call = transport.jsonCall("POST", base + "/fork", request).timeout(transport.operationTimeout());
        Page.Body<SandboxInfo> body = transport.json(call,
                Wire.MAPPER.getTypeFactory().constructParametricType(Page.Body.class, SandboxInfo.class));
        if (body.items() == null) return List.of();
        return body.items().stream().map(info -> new Sandbox(info, transport)).toList();
    }

    List<Sandbox> forks() {
        return all(base + "/forks", SandboxInfo.class).stream().map(info -> new Sandbox(info, transport)).toList();
    }

    Page<Event> events(String afterId) {
        return EventPages.after(transport, base + "/events", afterId);
    }

    EventSubscription streamEvents(long afterId, Consumer<Event> consumer) {
        return EventSubscription.open(transport, base + "/events", afterId, Objects.requireNonNull(consumer, "consumer"));
    }

    Terminal terminal(TerminalRequest request, Consumer<byte[]> output) {
        return Terminal.open(transport, base + "/terminal", Objects.requireNonNull(request, "request"), output);
    }

    /** Every item of a list call, following cursors should the server ever page it. */
    private <T> List<T> all(String path, Class<T> type) {
        var items = new ArrayList<T>();
        page(path, type, null).all().forEach(items::add);
        return items;
    }

    private <T> Page<T> page(String path, Class<T> type, String cursor) {
        Page.Body<T> body = transport.page(transport.call("GET", path).query(Query.of().add("cursor", cursor)), type);
        return new Page<>(body.items(), body.nextCursor(), next -> page(path, type, next));
    }

    ExecResult exec(ExecRequest request) {
        var call = transport.jsonCall("POST", base + "/exec", request.toBody()).timeout(execTimeout(request));
        return ExecResult.from(transport.json(call, ExecWire.Response.class));
    }

    ExecResult execStream(ExecRequest request, ExecOutputListener listener) {
        var call = transport.jsonCall("POST", base + "/exec", request.toBody())
                .accept("text/event-stream").timeout(execTimeout(request));
        HttpResponse<InputStream> response = transport.send(call);
        String requestId = HttpTransport.header(response, HttpTransport.REQUEST_ID);
        String type = HttpTransport.header(response, "Content-Type");
        if (type != null && type.startsWith("application/json")) {
            // A server that does not stream answers with the plain result: deliver it in one go.
            ExecResult result = ExecResult.from(parseJson(call, response));
            if (result.stdoutBytes().length > 0) listener.onStdout(result.stdoutBytes());
            if (result.stderrBytes().length > 0) listener.onStderr(result.stderrBytes());
            return result;
        }
        try (InputStream in = response.body()) {
            ExecResult result = new ExecEventStream(listener, requestId).read(in);
            if (result == null) {
                throw new StasisConnectionException("the exec stream from " + transport.baseUrl() + " ("
                        + call.path() + ") ended before the exit event", null);
            }
            return result;
        } catch (IOException e) {
            throw transport.brokenStream(call, e);
        }
    }

    private ExecWire.Response parseJson(HttpTransport.Call call, HttpResponse<InputStream> response) {
        byte[] body = transport.readAll(call, response);
        try {
            return Wire.MAPPER.readValue(body, ExecWire.Response.class);
        } catch (IOException e) {
            throw new StasisClientException("cannot read the exec result: " + e.getMessage(), e);
        }
    }

    /**
     * Headers of a non-streaming exec come only when the command ends: wait for its timeout plus
     * the usual request timeout. Without an explicit command timeout the server's default applies,
     * which the client does not know, so it does not limit the wait.
     */
    private Duration execTimeout(ExecRequest request) {
        Duration slack = transport.requestTimeout();
        if (request.timeout() == null || slack == null) return null;
        return request.timeout().plus(slack);
    }
}
