package io.stasis.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.e2b.ConnectRpc.Code;
import io.stasis.e2b.ConnectRpc.RpcException;
import io.stasis.e2b.E2bErrors.E2bException;
import io.stasis.sdk.NotFoundException;
import io.stasis.sdk.RetryPolicy;
import io.stasis.sdk.StasisClient;
import io.stasis.sdk.StasisClientException;
import io.stasis.sdk.UnauthenticatedException;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The E2B protocol at {@value #PATH}: E2B's REST API (its SDKs' {@code E2B_API_URL} is
 * {@code http://HOST:PORT/e2b}) and envd, the agent E2B runs inside each sandbox, served here by
 * Stasis itself ({@code E2B_SANDBOX_URL=http://HOST:PORT/e2b/envd}; the sandbox is named by the
 * {@code E2b-Sandbox-Id} header). Every call becomes calls of the Stasis API on this service's
 * port with the caller's credential, so tenants, scopes, quotas and nodes apply as to any client:
 * the API key ({@code X-API-KEY}) on the control plane, the sandbox's envd token
 * ({@code X-Access-Token}, a Stasis token scoped to it, handed out by create and connect) on envd.
 */
public final class E2bServlet extends HttpServlet {
    public static final String PATH = "/e2b";
    private static final Logger log = LoggerFactory.getLogger(E2bServlet.class);
    private static final Pattern SANDBOX_ROUTE = Pattern.compile("/(?:v2/)?sandboxes/([^/]+)(/[a-z]+)?");
    private static final Pattern TEMPLATE_ROUTE = Pattern.compile("/templates/([^/]+)");
    private static final Pattern RPC_ROUTE = Pattern.compile("/envd/(process\\.Process|filesystem\\.Filesystem)/([A-Za-z]+)");
    private static final Duration REQUEST_TIMEOUT = Duration.ofMinutes(10);

    private final transient Supplier<String> apiUrl;
    private final transient HttpClient http;
    private final transient ControlPlane control = new ControlPlane();
    private final transient ProcessRpc processes = new ProcessRpc();
    private final transient FilesystemRpc filesystem = new FilesystemRpc();
    private final transient EnvdFiles files = new EnvdFiles();
    private final transient EnvdInfo info = new EnvdInfo();

    /** @param apiUrl the Stasis API's base URL, asked for at the first call (the port may be chosen late) */
    public E2bServlet(Supplier<String> apiUrl) {
        this.apiUrl = apiUrl;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(10))
                .followRedirects(HttpClient.Redirect.NEVER).build();
    }

    @Override
    public void destroy() {
        filesystem.close();
        http.close();
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        if (path.startsWith(PATH)) path = path.substring(PATH.length());
        try {
            if (path.startsWith("/envd/") || path.equals("/envd")) envd(path, request, response);
            else controlPlane(path, request, response);
        } catch (RuntimeException e) { // a fault of this translation: still an answer the SDK can read
            log.atWarn().addKeyValue("path", path).setCause(e).log("E2B call failed");
            if (!response.isCommitted()) E2bErrors.write(response, 500, "internal error: " + e);
        }
    }

    // --- the control plane ---

    private void controlPlane(String path, HttpServletRequest request, HttpServletResponse response) throws IOException {
        String method = request.getMethod();
        try {
            StasisClient client = client(apiKey(request));
            if (path.equals("/sandboxes") || path.equals("/v2/sandboxes")) {
                switch (method) {
                    case "POST" -> ConnectRpc.writeJson(response, 201, control.create(client, body(request)));
                    case "GET" -> list(client, path.startsWith("/v2"), request, response);
                    default -> throw new E2bException(405, method + " is not allowed on " + path);
                }
                return;
            }
            if (path.equals("/sandboxes/metrics") && method.equals("GET")) {
                var ids = splitSet(request.getParameterValues("sandbox_ids"));
                if (ids.isEmpty() || ids.size() > 100) throw new E2bException(400, "sandbox_ids names 1 to 100 sandboxes, comma-separated");
                ConnectRpc.writeJson(response, 200, Map.of("sandboxes", control.metricsOf(client, ids)));
                return;
            }
            if (path.equals("/snapshots") && method.equals("GET")) {
                ConnectRpc.writeJson(response, 200, E2bSnapshots.list(client, request.getParameter("sandboxID"), request.getParameter("name")));
                return;
            }
            Matcher template = TEMPLATE_ROUTE.matcher(path);
            if (template.matches() && method.equals("DELETE")) { // E2B deletes a snapshot as the template it is
                if (!E2bSnapshots.delete(client, template.group(1))) throw new E2bException(404, "snapshot " + template.group(1) + " not found");
                response.setStatus(204);
                return;
            }
            Matcher route = SANDBOX_ROUTE.matcher(path);
            if (!route.matches()) throw new E2bException(404, "no route " + method + " " + path);
            String id = route.group(1);
            String action = route.group(2) == null ? "" : route.group(2);
            switch (method + " " + action) {
                case "GET " -> ConnectRpc.writeJson(response, 200, control.get(client, id));
                case "DELETE " -> {
                    if (!control.kill(client, id)) throw new E2bException(404, "sandbox " + id + " not found");
                    response.setStatus(204);
                }
                case "POST /timeout" -> {
                    var timeout = body(request).path("timeout");
                    if (!timeout.canConvertToInt()) throw new E2bException(400, "timeout (seconds) is required");
                    control.setTimeout(client, id, timeout.asInt());
                    response.setStatus(204);
                }
                case "POST /pause" -> {
                    if (!control.pause(client, id)) throw new E2bException(409, "sandbox " + id + " is already paused");
                    response.setStatus(204);
                }
                case "POST /connect", "POST /resume" -> ConnectRpc.writeJson(response, 200, control.connect(client, id, body(request)));
                case "POST /fork" -> ConnectRpc.writeJson(response, 201, control.fork(client, id, body(request)));
                case "GET /metrics" -> ConnectRpc.writeJson(response, 200, control.metrics(client, id));
                case "GET /logs" -> {
                    var entries = E2bLogs.entries(client, id, longParameter(request, "start", 0), (int) longParameter(request, "limit", 1000));
                    ConnectRpc.writeJson(response, 200, path.startsWith("/v2/") ? Map.of("logs", entries) : E2bLogs.v1(entries));
                }
                case "POST /snapshots" -> ConnectRpc.writeJson(response, 201, E2bSnapshots.take(client, id, body(request).path("name").asText(null)));
                case "PUT /network" -> {
                    control.updateNetwork(client, id, body(request));
                    response.setStatus(204);
                }
                default -> throw new E2bException(404, "no route " + method + " " + path + " (not supported by Stasis yet: see docs/E2B.md)");
            }
        } catch (E2bException e) {
            E2bErrors.write(response, e.status, e.getMessage());
        } catch (StasisClientException e) {
            int status = E2bErrors.statusOf(e);
            if (status >= 500) log.atWarn().addKeyValue("path", path).setCause(e).log("E2B call failed");
            E2bErrors.write(response, status, E2bErrors.messageOf(e));
        }
    }

    private void list(StasisClient client, boolean v2, HttpServletRequest request, HttpServletResponse response) throws IOException {
        Set<String> states = v2 ? splitSet(request.getParameterValues("state")) : Set.of("running");
        var metadata = new LinkedHashMap<String, String>();
        String query = request.getParameter("metadata");
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                if (eq <= 0) throw new E2bException(400, "metadata is key=value pairs joined by &");
                metadata.put(decode(pair.substring(0, eq)), decode(pair.substring(eq + 1)));
            }
        }
        Integer limit = request.getParameter("limit") == null ? null : parseLimit(request.getParameter("limit"));
        var page = control.list(client, states, metadata, limit, request.getParameter("nextToken"));
        if (page.nextToken() != null) response.setHeader("X-Next-Token", page.nextToken());
        ConnectRpc.writeJson(response, 200, page.items());
    }

    private static Set<String> splitSet(String[] values) {
        if (values == null) return Set.of();
        return Arrays.stream(values).flatMap(v -> Arrays.stream(v.split(","))).map(String::strip).filter(s -> !s.isEmpty())
                .collect(Collectors.toSet());
    }

    private static long longParameter(HttpServletRequest request, String name, long fallback) {
        String value = request.getParameter(name);
        if (value == null || value.isBlank()) return fallback;
        try {
            long parsed = Long.parseLong(value.strip());
            if (parsed < 0) throw new NumberFormatException();
            return parsed;
        } catch (NumberFormatException e) {
            throw new E2bException(400, name + " must be a number that is not negative, was '" + value + "'");
        }
    }

    private static Integer parseLimit(String value) {
        try {
            int limit = Integer.parseInt(value);
            if (limit < 1) throw new NumberFormatException();
            return Math.min(limit, 100);
        } catch (NumberFormatException e) {
            throw new E2bException(400, "limit must be a positive number");
        }
    }

    private static String decode(String text) {
        return URLDecoder.decode(text, StandardCharsets.UTF_8);
    }

    // --- envd ---

    private void envd(String path, HttpServletRequest request, HttpServletResponse response) throws IOException, ServletException {
        Matcher rpc = RPC_ROUTE.matcher(path);
        if (rpc.matches()) {
            rpc(rpc.group(1), rpc.group(2), request, response);
            return;
        }
        try {
            switch (request.getMethod() + " " + path) {
                case "GET /envd/health" -> health(request, response);
                case "GET /envd/files" -> files.download(envdCall(request, request.getParameter("username")), request.getParameter("path"), response);
                case "POST /envd/files" -> files.upload(envdCall(request, request.getParameter("username")), request.getParameter("path"), request, response);
                case "GET /envd/envs" -> ConnectRpc.writeJson(response, 200, info.envs(envdCall(request, null)));
                case "GET /envd/metrics" -> ConnectRpc.writeJson(response, 200, info.metrics(envdCall(request, null)));
                case "POST /envd/init" -> {
                    var call = envdCall(request, null);
                    call.client().sandboxes().get(call.sandbox()); // the sandbox exists, and the caller's token is its own
                    info.init(ConnectRpc.readUnary(request));
                    response.setStatus(204);
                }
                default -> throw new E2bException(404, "no route " + request.getMethod() + " " + path);
            }
        } catch (E2bException e) {
            E2bErrors.write(response, e.status, e.getMessage());
        } catch (RpcException e) {
            E2bErrors.write(response, e.code.httpStatus, e.getMessage());
        } catch (StasisClientException e) {
            E2bErrors.write(response, E2bErrors.statusOf(e), E2bErrors.messageOf(e));
        }
    }

    /**
     * envd's health as E2B's proxy answers it: 204 while the sandbox runs, 502 when it is gone or
     * asleep (the SDK's {@code isRunning} reads that as false). Without a sandbox named: 204.
     */
    private void health(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (request.getHeader("E2b-Sandbox-Id") == null) {
            response.setStatus(204);
            return;
        }
        var call = envdCall(request, null);
        try {
            String state = call.client().sandboxes().get(call.sandbox()).state();
            if (!state.equals("running")) throw new E2bException(502, "sandbox " + call.sandbox() + " is " + state);
        } catch (NotFoundException | UnauthenticatedException gone) {
            // A deleted sandbox's envd token goes with it: either answer means it is gone.
            throw new E2bException(502, "sandbox " + call.sandbox() + " is not running: " + gone.getMessage());
        }
        response.setStatus(204);
    }

    private void rpc(String service, String method, HttpServletRequest request, HttpServletResponse response) throws IOException {
        boolean streaming = service.equals("process.Process") ? Set.of("Start", "Connect", "StreamInput").contains(method) : method.equals("WatchDir");
        if (!"POST".equals(request.getMethod())) {
            ConnectRpc.answerUnaryError(response, new RpcException(Code.UNIMPLEMENTED, "Connect calls are POSTs"));
            return;
        }
        if (streaming) {
            stream(service, method, request, response);
            return;
        }
        try {
            JsonNode message = ConnectRpc.readUnary(request);
            var call = envdCall(request, null);
            Object answer = switch (service + "/" + method) {
                case "process.Process/List" -> processes.list(call);
                case "process.Process/SendSignal" -> processes.sendSignal(call, message);
                case "process.Process/SendInput" -> processes.sendInput(call, message);
                case "process.Process/CloseStdin" -> processes.closeStdin(call, message);
                case "process.Process/Update" -> processes.update(call, message);
                case "filesystem.Filesystem/Stat" -> filesystem.stat(call, message);
                case "filesystem.Filesystem/ListDir" -> filesystem.listDir(call, message);
                case "filesystem.Filesystem/MakeDir" -> filesystem.makeDir(call, message);
                case "filesystem.Filesystem/Move" -> filesystem.move(call, message);
                case "filesystem.Filesystem/Remove" -> filesystem.remove(call, message);
                case "filesystem.Filesystem/CreateWatcher" -> filesystem.createWatcher(call, message);
                case "filesystem.Filesystem/GetWatcherEvents" -> filesystem.getWatcherEvents(call, message);
                case "filesystem.Filesystem/RemoveWatcher" -> filesystem.removeWatcher(call, message);
                default -> throw new RpcException(Code.UNIMPLEMENTED, service + "/" + method + " is not supported by Stasis (see docs/E2B.md)");
            };
            ConnectRpc.answerUnary(response, answer);
        } catch (RpcException e) {
            ConnectRpc.answerUnaryError(response, e);
        } catch (StasisClientException e) {
            ConnectRpc.answerUnaryError(response, E2bErrors.toRpc(e));
        } catch (E2bException e) {
            ConnectRpc.answerUnaryError(response, new RpcException(e.status == 404 ? Code.NOT_FOUND : Code.INVALID_ARGUMENT, e.getMessage()));
        }
    }

    private void stream(String service, String method, HttpServletRequest request, HttpServletResponse response) throws IOException {
        ConnectRpc.Stream stream;
        JsonNode message;
        EnvdCall call;
        boolean clientStreams = method.equals("StreamInput"); // its messages are read as they come
        try {
            message = clientStreams ? null : ConnectRpc.readEnveloped(request);
            call = envdCall(request, null);
        } catch (RpcException e) {
            new ConnectRpc.Stream(response).end(e);
            return;
        }
        stream = new ConnectRpc.Stream(response);
        try {
            switch (service + "/" + method) {
                case "process.Process/Start" -> processes.start(call, message, ConnectRpc.deadline(request), stream);
                case "process.Process/Connect" -> processes.connect(call, message, stream);
                case "process.Process/StreamInput" -> stream.send(processes.streamInput(call, ConnectRpc.messages(request.getInputStream())));
                default -> filesystem.watchDir(call, message, stream);
            }
            stream.end(null);
        } catch (RpcException e) {
            stream.end(e);
        } catch (StasisClientException e) {
            stream.end(E2bErrors.toRpc(e));
        } catch (E2bException e) {
            stream.end(new RpcException(Code.INVALID_ARGUMENT, e.getMessage()));
        } catch (UncheckedIOException e) {
            log.atDebug().addKeyValue("call", service + "/" + method).log("the client left the stream: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The envd call's sandbox, credential and user. */
    private EnvdCall envdCall(HttpServletRequest request, String username) {
        String sandbox = request.getHeader("E2b-Sandbox-Id");
        if (sandbox == null || sandbox.isBlank()) throw new RpcException(Code.INVALID_ARGUMENT, "the E2b-Sandbox-Id header names the sandbox");
        String token = request.getHeader("X-Access-Token");
        if (token == null || token.isBlank()) token = request.getHeader("X-API-KEY");
        if (token == null || token.isBlank()) throw new RpcException(Code.UNAUTHENTICATED, "an X-Access-Token (the sandbox's envdAccessToken) is required");
        String user = username != null && !username.isEmpty() ? username : EnvdCall.userOfBasic(request.getHeader("Authorization"));
        return new EnvdCall(client(token), sandbox, user);
    }

    private static String apiKey(HttpServletRequest request) {
        String key = request.getHeader("X-API-KEY");
        if (key == null || key.isBlank()) {
            String authorization = request.getHeader("Authorization");
            if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) key = authorization.substring(7).strip();
        }
        if (key == null || key.isBlank()) throw new E2bException(401, "an API key is required (X-API-KEY: a Stasis API key)");
        return key;
    }

    /** A client of the Stasis API with the caller's credential; cheap: they all share one HTTP client. */
    private StasisClient client(String credential) {
        return StasisClient.builder().url(apiUrl.get()).apiKey(credential).httpClient(http).retryPolicy(RetryPolicy.none())
                .requestTimeout(REQUEST_TIMEOUT).build();
    }

    private static JsonNode body(HttpServletRequest request) throws IOException {
        byte[] bytes = request.getInputStream().readNBytes(1 << 20);
        if (bytes.length == 0) return ConnectRpc.JSON.createObjectNode();
        try {
            JsonNode node = ConnectRpc.JSON.readTree(bytes);
            if (node == null || !node.isObject()) throw new E2bException(400, "the body must be a JSON object");
            return node;
        } catch (IOException e) {
            throw new E2bException(400, "the body is not JSON: " + e.getMessage());
        }
    }
}
