package io.stasis.server.http;

import io.javalin.http.Context;
import io.javalin.websocket.WsContext;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.node.Node;
import io.stasis.core.node.NodeService;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.core.volume.VolumeId;
import io.stasis.server.auth.AccessGuard;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Collections;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Any node answers for any sandbox: a request for a sandbox, checkpoint or volume on another node
 * sharing the catalog (its processes or files are on that host) is passed to that node, after this
 * one has authenticated the caller and checked its access, and the answer streams back as it comes
 * (event streams, process output and file downloads included).
 *
 * <p>The request goes as it came, credentials included (the other node checks them against the
 * same catalog), with {@value #FORWARDED_BY} naming this node: a node never passes on a request
 * another node passed to it, so a catalog that moved a record meanwhile cannot make a loop. What is
 * on a node whose lease has lapsed answers {@code node_unavailable} (503) until that node is back;
 * so does what is on a node that does not take the connection. A terminal's WebSocket is opened at
 * the sandbox's node too, and its frames relayed ({@link TerminalRelay}).
 */
public final class NodeForwarder implements AutoCloseable {
    public static final String FORWARDED_BY = "Stasis-Forwarded-By";
    private static final String REMOTE_NODE = "stasis.remoteNode";
    /** The body as {@link Json#body} read it, so that a request is passed on after its handler read the body. */
    static final String BODY_READ = "stasis.bodyRead";
    private static final String LAPSED_NODE = "stasis.lapsedNode";
    /** Headers about one connection, or that the client sets itself from the request it sends. */
    private static final Set<String> NOT_PASSED = Set.of("connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te",
            "trailer", "transfer-encoding", "upgrade", "host", "content-length", "expect", "http2-settings");
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
    /** How many nodes a create is sent to at most, when those before answered full. */
    private static final int PLACEMENTS = 3;
    private static final String RESTRICTED_HEADERS_ALLOWED = "jdk.httpclient.allowRestrictedHeaders";

    private final NodeService nodes;
    private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(CONNECT_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NEVER).build();

    public NodeForwarder(NodeService nodes) {
        this.nodes = nodes;
    }

    /**
     * For a matched route, after the access guard: serves the request from the sandbox's node if that
     * is another one. On a node being drained, a sandbox already handed over (hibernated, waiting for
     * its new node) answers {@code node_unavailable} for the moment it takes instead of waking here.
     * (Creates are placed by their handler, which knows what they ask for: {@link #placeCreate}.)
     */
    void forwardIfElsewhere(Context ctx) throws IOException, InterruptedException {
        var remote = remoteOf(ctx);
        if (remote.isPresent()) {
            passTo(ctx, remote.get());
            return;
        }
        var sandbox = AccessGuard.resolvedSandbox(ctx);
        if (nodes.draining() && sandbox.isPresent() && nodes.handedOver(new SandboxId(sandbox.get())))
            throw new StasisException(ErrorCode.NODE_UNAVAILABLE, "sandbox " + sandbox.get() + " is moving from node " + nodes.name()
                    + ", which is being drained, to another node; try again in a few seconds", Map.of("node", nodes.name()));
    }

    /**
     * Passes a create whose body the handler has read to the node it is to be created on, if that is
     * another one (see {@link NodeService#placeElsewhere}); returns whether it did. A node that
     * answers it is full (it filled since the catalog was read: another create took its last room)
     * is passed over and the create placed again, up to {@value #PLACEMENTS} nodes; this node may
     * then make it itself. A create another node passed here stays: that node placed it.
     */
    boolean placeCreate(Context ctx, TenantUsage demand) throws IOException, InterruptedException {
        return placeCreate(ctx, demand, Set.of());
    }

    private boolean placeCreate(Context ctx, TenantUsage demand, Set<String> fullAlready) throws IOException, InterruptedException {
        if (ctx.header(FORWARDED_BY) != null) return false;
        var full = new HashSet<>(fullAlready);
        Answer refusal = null;
        while (true) {
            Optional<Node> target;
            try {
                target = nodes.placeElsewhere(demand, full);
            } catch (StasisException noneLeft) { // a draining node whose other nodes all answered full: the last one's answer
                if (refusal == null) throw noneLeft;
                relay(ctx, refusal);
                return true;
            }
            if (target.isEmpty()) return false;
            var answer = send(ctx, target.get());
            if (full.size() + 1 >= PLACEMENTS || !answer.saysFull(target.get().name())) {
                relay(ctx, answer);
                return true;
            }
            full.add(target.get().name());
            refusal = answer;
        }
    }

    /**
     * Passes a create this node placed on itself to another node when its admission found this node
     * full ({@code host_busy} naming this node's limit); returns whether it did.
     */
    boolean placeAgainIfFull(Context ctx, StasisException refusal, TenantUsage demand) throws IOException, InterruptedException {
        boolean full = refusal.code() == ErrorCode.HOST_BUSY && nodes.name().equals(refusal.details().get("node"))
                && refusal.details().containsKey("limit");
        // This node is passed over: the catalog may show it room again by now, but it has just said it has none.
        return full && placeCreate(ctx, demand, Set.of(nodes.name()));
    }

    /** Passes a create to another node if this one is being drained; returns whether it did. */
    boolean leaveIfDraining(Context ctx) throws IOException, InterruptedException {
        return nodes.draining() && placeCreate(ctx, TenantUsage.NONE);
    }

    /**
     * Passes a request on a volume's files (a create that mounts it, a call of its S3 endpoint) to
     * the volume's node, if that is another one: the files are on its disk. Returns whether it did.
     */
    public boolean passIfVolumeElsewhere(Context ctx, VolumeId volume) throws IOException, InterruptedException {
        if (!nodes.sharesCatalog()) return false;
        var remote = nodes.remoteOf(volume);
        if (remote.isEmpty()) return false;
        forward(ctx, reachable(ctx, "volume " + volume.value(), remote.get()));
        return true;
    }

    /** The node, its lease lapsed, whose sandbox's record this node reads for the caller (see {@link #forwardIfElsewhere}). */
    static Optional<String> lapsedNode(Context ctx) {
        return Optional.ofNullable(ctx.attribute(LAPSED_NODE));
    }

    private static boolean isRecordRead(Context ctx) {
        var matched = ctx.endpoints().matchedHttpEndpoint(); // ctx.endpoint() is this before-handler's own
        return ctx.method().name().equals("GET") && matched != null && matched.path.equals("/v1/sandboxes/{id}");
    }

    /** Serves the request from {@code node}: passes it on and streams the answer back; no handler of this node runs. */
    void passTo(Context ctx, Node node) throws IOException, InterruptedException {
        forward(ctx, node);
        ctx.skipRemainingHandlers();
    }

    /** For a WebSocket upgrade, after the access guard: notes the other node a terminal's sandbox is on, for {@link #remoteNode}. */
    void markUpgradeIfElsewhere(Context ctx) {
        try {
            remoteOf(ctx).ifPresent(node -> ctx.attribute(REMOTE_NODE, node));
        } catch (StasisException e) {
            AccessGuard.refuseUpgrade(ctx, e);
        }
    }

    /** The other node the socket's sandbox is on, as {@link #markUpgradeIfElsewhere} found it. */
    static Optional<Node> remoteNode(WsContext ctx) {
        return Optional.ofNullable(ctx.attribute(REMOTE_NODE));
    }

    /** Opens the sandbox's terminal at {@code node} for the caller's socket. */
    TerminalRelay relayTerminal(WsContext ctx, Node node) throws Exception {
        return TerminalRelay.open(client, ctx, node, "/v1/sandboxes/" + AccessGuard.sandboxId(ctx) + "/terminal", nodes.name());
    }

    /** The other node the request's sandbox, checkpoint or volume (as the access guard resolved it) is on, if any. */
    private Optional<Node> remoteOf(Context ctx) {
        if (!nodes.sharesCatalog()) return Optional.empty(); // one node has everything: no lookup on its requests
        String what;
        Optional<NodeService.Remote> remote;
        var sandbox = AccessGuard.resolvedSandbox(ctx);
        var checkpoint = AccessGuard.resolvedCheckpoint(ctx);
        var volume = AccessGuard.resolvedVolume(ctx);
        if (sandbox.isPresent()) {
            what = "sandbox " + sandbox.get();
            remote = nodes.remoteOf(new SandboxId(sandbox.get()));
        } else if (checkpoint.isPresent()) {
            what = "checkpoint " + checkpoint.get();
            remote = nodes.remoteOf(new CheckpointId(checkpoint.get()));
        } else if (volume.isPresent()) {
            what = "volume " + volume.get();
            remote = nodes.remoteOf(new VolumeId(volume.get()));
        } else {
            return Optional.empty();
        }
        if (remote.isEmpty()) return Optional.empty();
        if (remote.get().alive().isEmpty() && sandbox.isPresent() && isRecordRead(ctx)) {
            ctx.attribute(LAPSED_NODE, remote.get().name()); // its record is in the catalog: read here, shown lost once its node is
            return Optional.empty();
        }
        return Optional.of(reachable(ctx, what, remote.get()));
    }

    /**
     * The other node {@code what} is on, to pass the request to: never one another node passed here
     * (the catalog moved it meanwhile: no loops), nor one whose lease has lapsed.
     */
    private Node reachable(Context ctx, String what, NodeService.Remote remote) {
        String by = ctx.header(FORWARDED_BY);
        if (by != null)
            throw new StasisException(ErrorCode.NODE_UNAVAILABLE, "node " + by + " passed on a request for " + what
                    + ", which the catalog places on node " + remote.name() + ", not on " + nodes.name() + "; try again",
                    Map.of("node", remote.name()));
        return remote.alive().orElseThrow(() -> unavailable(what, remote.name(), "its lease has lapsed (it stopped, or lost the catalog)"));
    }

    private void forward(Context ctx, Node node) throws IOException, InterruptedException {
        relay(ctx, send(ctx, node));
    }

    /** The other node's answer to the request, its body not read yet (but for a refusal, read to see why). */
    private record Answer(int status, HttpHeaders headers, InputStream body) {
        /** This answer with its body read if it is a refusal (503: a small error body), so that {@link #saysFull} may look into it. */
        Answer readIfRefused() throws IOException {
            if (status != 503) return this;
            try (var in = body) {
                return new Answer(status, headers, new ByteArrayInputStream(in.readAllBytes()));
            }
        }

        /** Whether this is {@code node}'s refusal because it is full: 503 host_busy naming it and the limit it reached. */
        boolean saysFull(String node) {
            if (!(body instanceof ByteArrayInputStream read)) return false; // not a refusal: see readIfRefused
            read.mark(0);
            try {
                var error = Json.MAPPER.readTree(read).path("error");
                return error.path("code").asText().equals(ErrorCode.HOST_BUSY.wireName())
                        && error.path("details").path("node").asText().equals(node) && error.path("details").hasNonNull("limit");
            } catch (IOException notJson) {
                return false;
            } finally {
                read.reset();
            }
        }
    }

    private Answer send(Context ctx, Node node) throws IOException, InterruptedException {
        String query = ctx.queryString();
        URI target = URI.create(node.advertiseUrl() + ctx.req().getRequestURI() + (query == null ? "" : "?" + query));
        var request = HttpRequest.newBuilder(target).method(ctx.method().name(), body(ctx));
        for (String name : Collections.list(ctx.req().getHeaderNames())) {
            if (NOT_PASSED.contains(name.toLowerCase(Locale.ROOT)) || name.equalsIgnoreCase(FORWARDED_BY)) continue;
            for (String value : Collections.list(ctx.req().getHeaders(name))) request.header(name, value);
        }
        request.header(FORWARDED_BY, nodes.name());
        passHost(ctx, request);
        HttpResponse<InputStream> response;
        try {
            response = client.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        } catch (IOException e) {
            throw unavailable(ctx.path(), node.name(), "it did not answer at " + node.advertiseUrl() + ": " + e);
        }
        return new Answer(response.statusCode(), response.headers(), response.body()).readIfRefused();
    }

    /** Writes the other node's answer as this node's, streaming its body as it comes. */
    private static void relay(Context ctx, Answer answer) throws IOException {
        var res = ctx.res();
        res.setStatus(answer.status());
        answer.headers().map().forEach((name, values) -> {
            if (NOT_PASSED.contains(name.toLowerCase(Locale.ROOT)) || name.startsWith(":")) return;
            // The servlet keeps the type apart from other headers (Javalin set a default before this ran).
            if (name.equalsIgnoreCase("content-type")) res.setContentType(values.getFirst());
            else for (String value : values) res.addHeader(name, value);
        });
        answer.headers().firstValueAsLong("content-length").ifPresent(res::setContentLengthLong);
        ctx.attribute(HttpApi.ERROR_WRITTEN, true); // the answer is the other node's, errors included
        try (InputStream in = answer.body(); var out = res.getOutputStream()) {
            byte[] buffer = new byte[16 * 1024];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush(); // streams (events, process output) reach the caller as they come
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /**
     * Lets this JVM's HTTP client send the {@code Host} header a request came with (the JDK sets its
     * own otherwise): a request signed with AWS Signature V4 (the S3 endpoint) covers its host, so
     * the node it is passed to must see the one the client signed. Call before any HTTP client use.
     */
    public static void allowPassingTheHost() {
        String allowed = System.getProperty(RESTRICTED_HEADERS_ALLOWED, "");
        if (!allowed.toLowerCase(Locale.ROOT).contains("host"))
            System.setProperty(RESTRICTED_HEADERS_ALLOWED, allowed.isBlank() ? "host" : allowed + ",host");
    }

    private static void passHost(Context ctx, HttpRequest.Builder request) {
        String host = ctx.header("Host");
        if (host == null) return;
        try {
            request.header("Host", host);
        } catch (IllegalArgumentException restricted) {
            // This JVM's client began before allowPassingTheHost (a service inside another program): the target's
            // own host goes, and only what is signed over the host (S3 calls) is refused there.
        }
    }

    private static HttpRequest.BodyPublisher body(Context ctx) {
        byte[] read = ctx.attribute(BODY_READ);
        if (read != null) return HttpRequest.BodyPublishers.ofByteArray(read);
        long length = ctx.req().getContentLengthLong();
        if (length == 0) return HttpRequest.BodyPublishers.noBody();
        boolean chunked = "chunked".equalsIgnoreCase(ctx.header("Transfer-Encoding"));
        if (length < 0 && !chunked) return HttpRequest.BodyPublishers.noBody();
        var stream = HttpRequest.BodyPublishers.ofInputStream(() -> {
            try {
                return ctx.req().getInputStream();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        return length > 0 ? HttpRequest.BodyPublishers.fromPublisher(stream, length) : stream;
    }

    private static StasisException unavailable(String what, String node, String why) {
        return new StasisException(ErrorCode.NODE_UNAVAILABLE, what + " is on node " + node + ", which is not available: " + why
                + "; it answers again when that node is back", Map.of("node", node));
    }

    @Override
    public void close() {
        client.close();
    }
}
