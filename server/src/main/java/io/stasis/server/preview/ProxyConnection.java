package io.stasis.server.preview;

import io.stasis.core.error.StasisException;
import io.stasis.core.preview.Preview;
import io.stasis.core.preview.PreviewAccess;
import io.stasis.core.preview.PreviewId;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.http1.BodyFraming;
import io.stasis.http1.BodyRelay;
import io.stasis.http1.HeadReader;
import io.stasis.http1.HttpFramingException;
import io.stasis.http1.HttpHeaders;
import io.stasis.http1.HttpInput;
import io.stasis.http1.RequestHead;
import io.stasis.http1.ResponseHead;
import io.stasis.server.http.NodeForwarder;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection to the preview listener, on its own virtual thread: reads each request's
 * head, decides with the {@link io.stasis.core.preview.PreviewService} whether it may pass, and
 * relays it to the sandbox's port over a kept upstream connection, the response back as the
 * upstream writes it. A WebSocket upgrade that the upstream accepts (101) turns the connection
 * into a plain two-way byte relay. Every request is checked again, so a revoked preview stops a
 * kept-alive connection at its next request; the revocation also closes the connection at once.
 */
final class ProxyConnection implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(ProxyConnection.class);
    /** How long a kept-alive client connection may wait for its next request. */
    private static final int IDLE_TIMEOUT_MS = 60_000;
    private static final int CONNECT_TIMEOUT_MS = 10_000;
    private static final int BUFFER = 16 * 1024;
    /** Hop-by-hop fields (RFC 9110 section 7.6.1): they describe one connection, never forwarded. */
    private static final List<String> HOP_BY_HOP = List.of("Connection", "Keep-Alive", "Proxy-Connection", "TE", "Trailer",
            "Transfer-Encoding", "Upgrade");

    private final Socket client;
    private final PreviewProxy proxy;
    private volatile PreviewId admittedBy;
    /** The last admission on this connection: later requests for the same preview and token skip the catalog. */
    private Admission lastAdmission;
    private volatile Socket upstream;
    private InetSocketAddress upstreamAddress;
    private HttpInput upIn;
    private OutputStream upOut;

    ProxyConnection(Socket client, PreviewProxy proxy) {
        this.client = client;
        this.proxy = proxy;
    }

    @Override
    public void run() {
        try (client) {
            var in = new HttpInput(client.getInputStream(), BUFFER);
            var out = new BufferedOutputStream(client.getOutputStream(), BUFFER);
            while (exchange(in, out)) {
                // one request and its response per turn, while both sides keep the connection
            }
        } catch (IOException e) {
            log.atDebug().addKeyValue("client", client.getRemoteSocketAddress()).addKeyValue("problem", e.toString())
                    .log("preview connection ended");
        } finally {
            closeUpstream();
            proxy.forget(this);
        }
    }

    /** Closes the connection if its current or last request was admitted by {@code preview}. */
    void closeIfAdmittedBy(PreviewId preview) {
        if (preview.equals(admittedBy)) close();
    }

    void close() {
        closeQuietly(client);
        closeUpstream();
    }

    /** Serves one request; returns whether the connection stays open for another. */
    private boolean exchange(HttpInput in, OutputStream out) throws IOException {
        RequestHead head;
        BodyFraming requestBody;
        try {
            client.setSoTimeout(IDLE_TIMEOUT_MS);
            head = HeadReader.readRequest(in);
            if (head == null) return false;
            client.setSoTimeout(0);
            requestBody = BodyFraming.ofRequest(head);
        } catch (SocketTimeoutException e) {
            return false;
        } catch (HttpFramingException e) {
            return refuse(out, e.status(), e.getMessage());
        }
        var found = PreviewRoute.of(head, proxy.domain());
        if (found.isEmpty())
            return refuse(out, 404, "no preview here: use http://PORT-SANDBOX." + proxy.domain() + "/ or /preview/SANDBOX/PORT/");
        var route = found.get();
        var credentials = PreviewCredentials.of(head);
        Preview preview;
        if (lastAdmission != null && lastAdmission.covers(route, credentials.token(), proxy.clock().instant())) {
            // Revoking the preview closes this connection (closeIfAdmittedBy), so what was admitted still holds.
            preview = lastAdmission.preview();
        } else {
            switch (proxy.previews().admit(route.sandbox(), route.port(), credentials.token())) {
                case PreviewAccess.Denied denied -> {
                    lastAdmission = null;
                    return refuse(out, status(denied.reason()), message(denied.reason()));
                }
                case PreviewAccess.Admitted admitted -> preview = admitted.preview();
            }
            lastAdmission = new Admission(route.sandbox(), route.port(), credentials.token(), preview);
        }
        admittedBy = preview.id();
        if (credentials.fromQuery()) return redirectWithCookie(head, requestBody, route, preview, credentials, in, out);
        Optional<PreviewTargets.PassOn> passOn;
        InetSocketAddress address;
        try {
            passOn = proxy.targets().elsewhere(route.sandbox());
            if (passOn.isPresent() && head.headers().has(NodeForwarder.FORWARDED_BY))
                return refuse(out, 503, "node " + head.headers().first(NodeForwarder.FORWARDED_BY).orElse("") + " passed on a preview of "
                        + route.sandbox() + ", which is on node " + passOn.get().to() + "; try again");
            address = passOn.isPresent() ? passOn.get().listener() : proxy.targets().connectTarget(route.sandbox(), route.port());
        } catch (StasisException e) {
            int status = switch (e.code()) {
                case SANDBOX_NOT_FOUND -> 404;
                case INVALID_STATE, NODE_UNAVAILABLE -> 503;
                default -> 502;
            };
            return refuse(out, status, e.getMessage());
        }
        if (passOn.isPresent()) return forward(head, requestBody, route, address, passOn, in, out); // its node counts the use
        try (var use = proxy.targets().inUse(route.sandbox())) {
            return forward(head, requestBody, route, address, passOn, in, out);
        }
    }

    /** A request admitted on this connection: for the same sandbox, port and token, until the preview expires. */
    private record Admission(SandboxId sandbox, int port, Optional<String> token, Preview preview) {
        boolean covers(PreviewRoute route, Optional<String> requestToken, Instant now) {
            return sandbox.equals(route.sandbox()) && port == route.port() && token.equals(requestToken)
                    && !preview.isExpired(now);
        }
    }

    private static int status(PreviewAccess.Reason reason) {
        return switch (reason) {
            case NOT_FOUND -> 404;
            case EXPIRED -> 410;
            case TOKEN_MISSING -> 401;
            case TOKEN_WRONG -> 403;
        };
    }

    private static String message(PreviewAccess.Reason reason) {
        return switch (reason) {
            case NOT_FOUND -> "no preview of this port of this sandbox";
            case EXPIRED -> "this preview has expired";
            case TOKEN_MISSING -> "this preview is private: send its token (" + PreviewCredentials.HEADER + " header, or ?"
                    + PreviewCredentials.PARAMETER + "= once)";
            case TOKEN_WRONG -> "wrong preview token";
        };
    }

    /** The link form: 302 to the same URL without the token, which a cookie scoped to the preview then carries. */
    private boolean redirectWithCookie(RequestHead head, BodyFraming requestBody, PreviewRoute route, Preview preview,
                                       PreviewCredentials credentials, HttpInput in, OutputStream out) throws IOException {
        try {
            BodyRelay.copy(requestBody, in, OutputStream.nullOutputStream(), 400);
        } catch (HttpFramingException e) {
            return refuse(out, e.status(), e.getMessage());
        }
        var headers = new HttpHeaders()
                .add("Location", PreviewCredentials.withoutToken(originTarget(head)))
                .add("Cache-Control", "no-store")
                .add("Content-Length", "0");
        if (!preview.isPublic()) {
            var cookie = new StringBuilder(PreviewCredentials.COOKIE).append('=').append(credentials.token().orElseThrow())
                    .append("; Path=").append(route.cookiePath()).append("; HttpOnly; SameSite=Lax");
            preview.expiresAt().ifPresent(at -> cookie.append("; Max-Age=")
                    .append(Math.max(0, Duration.between(proxy.clock().instant(), at).toSeconds())));
            headers.add("Set-Cookie", cookie.toString());
        }
        boolean keep = head.keepAlive();
        if (!keep) headers.add("Connection", "close");
        out.write(new ResponseHead("HTTP/1.1", 302, "Found", headers).toBytes());
        out.flush();
        return keep;
    }

    private static String originTarget(RequestHead head) {
        String target = head.target();
        if (!target.regionMatches(true, 0, "http://", 0, 7)) return target;
        int slash = target.indexOf('/', 7);
        return slash < 0 ? "/" : target.substring(slash);
    }

    private boolean forward(RequestHead head, BodyFraming requestBody, PreviewRoute route, InetSocketAddress address,
                            Optional<PreviewTargets.PassOn> passOn, HttpInput in, OutputStream out) throws IOException {
        boolean webSocket = head.isWebSocketUpgrade();
        String originalHost = head.headers().first("Host").orElse("");
        byte[] upstreamHead = rewriteRequest(head, route, webSocket, originalHost, passOn).toBytes();
        ResponseHead response = null;
        Thread pump = null;
        var pumpFailure = new AtomicReference<Exception>();
        // A kept upstream connection may have been closed by the upstream meanwhile: retry once on a
        // fresh one, as long as nothing of the request body has been sent.
        for (int attempt = 0; attempt < 2 && response == null; attempt++) {
            boolean reused;
            try {
                reused = connect(address);
            } catch (IOException e) {
                return refuse(out, 502, "cannot connect to port " + route.port() + " of " + route.sandbox() + ": " + e.getMessage());
            }
            try {
                upOut.write(upstreamHead);
                upOut.flush();
                if (!(requestBody instanceof BodyFraming.None)) pump = pumpBody(requestBody, in, pumpFailure);
                response = readFinalHead(out);
                if (response == null && (!reused || pump != null))
                    return refuse(out, 502, "port " + route.port() + " of " + route.sandbox() + " closed the connection without answering");
            } catch (HttpFramingException e) {
                closeUpstream();
                return refuse(out, 502, e.getMessage());
            } catch (IOException e) {
                if (!reused || pump != null) {
                    closeUpstream();
                    return refuse(out, 502, "port " + route.port() + " of " + route.sandbox() + " failed: " + e.getMessage());
                }
            }
            if (response == null) closeUpstream();
        }
        if (response == null) return refuse(out, 502, "port " + route.port() + " of " + route.sandbox() + " did not answer");

        if (response.status() == 101) {
            if (!webSocket) {
                closeUpstream();
                return refuse(out, 502, "the upstream switched protocols without being asked to");
            }
            out.write(response.toBytes());
            out.flush();
            tunnel(in, out);
            return false;
        }

        BodyFraming responseBody;
        try {
            responseBody = BodyFraming.ofResponse(head.method(), response);
        } catch (HttpFramingException e) {
            closeUpstream();
            return refuse(out, 502, e.getMessage());
        }
        boolean upstreamKeeps = !response.headers().hasToken("Connection", "close") && !(responseBody instanceof BodyFraming.UntilClose)
                && !(response.version().equals("HTTP/1.0") && !response.headers().hasToken("Connection", "keep-alive"));
        boolean clientKeeps = head.keepAlive() && !(responseBody instanceof BodyFraming.UntilClose);
        var headers = response.headers();
        String transferEncoding = headers.first("Transfer-Encoding").orElse(null);
        dropHopByHop(headers, false);
        if (transferEncoding != null) headers.add("Transfer-Encoding", transferEncoding);
        if (!clientKeeps) headers.add("Connection", "close");
        else if (head.isHttp10()) headers.add("Connection", "keep-alive");
        out.write(new ResponseHead("HTTP/1.1", response.status(), response.reason(), headers).toBytes());
        out.flush();
        try {
            BodyRelay.copy(responseBody, upIn, out, 502);
        } catch (HttpFramingException e) {
            // Part of the response is out: nothing to answer; the client sees the connection end.
            log.atDebug().addKeyValue("sandbox", route.sandbox()).addKeyValue("port", route.port())
                    .addKeyValue("problem", e.getMessage()).log("upstream response body malformed");
            closeUpstream();
            return false;
        }
        if (!upstreamKeeps) closeUpstream();
        if (pump != null && !joined(pump)) {
            closeUpstream(); // answered before reading the whole request: the request's rest is still coming
            return false;
        }
        return clientKeeps && pumpFailure.get() == null;
    }

    /** The first non-interim response head; interim ones (100 Continue) are passed on to the client. */
    private ResponseHead readFinalHead(OutputStream out) throws IOException, HttpFramingException {
        while (true) {
            var response = HeadReader.readResponse(upIn);
            if (response == null || !response.isInterim()) return response;
            out.write(response.toBytes());
            out.flush();
        }
    }

    /** Sends the request body upstream on its own thread, so a 100 Continue or an early answer can come meanwhile. */
    private Thread pumpBody(BodyFraming body, HttpInput in, AtomicReference<Exception> failure) {
        var out = upOut;
        return Thread.ofVirtual().name("preview-request-body").start(() -> {
            try {
                BodyRelay.copy(body, in, out, 400);
                out.flush();
            } catch (IOException e) {
                failure.set(e);
                closeUpstream();
            }
        });
    }

    private static boolean joined(Thread pump) {
        try {
            return pump.join(Duration.ofSeconds(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * The head sent upstream: to the sandbox's port, without the preview's credentials and as to
     * {@code localhost}; or, passed on to the sandbox's node, as it came (host, target and credentials,
     * which that node checks again) and marked with {@link NodeForwarder#FORWARDED_BY}.
     */
    private RequestHead rewriteRequest(RequestHead head, PreviewRoute route, boolean webSocket, String originalHost,
                                       Optional<PreviewTargets.PassOn> passOn) {
        var headers = head.headers();
        if (passOn.isEmpty()) PreviewCredentials.strip(headers);
        String transferEncoding = headers.first("Transfer-Encoding").orElse(null);
        dropHopByHop(headers, webSocket);
        if (transferEncoding != null) headers.add("Transfer-Encoding", transferEncoding);
        if (webSocket) headers.set("Connection", "Upgrade");
        String clientIp = client.getInetAddress().getHostAddress();
        headers.set("X-Forwarded-For", headers.first("X-Forwarded-For").map(f -> f + ", " + clientIp).orElse(clientIp));
        if (!headers.has("X-Forwarded-Proto")) headers.add("X-Forwarded-Proto", "http");
        if (!headers.has("X-Forwarded-Host") && !originalHost.isEmpty()) headers.add("X-Forwarded-Host", originalHost);
        if (passOn.isPresent()) {
            headers.set(NodeForwarder.FORWARDED_BY, passOn.get().from());
            return new RequestHead(head.method(), originTarget(head), head.version(), headers);
        }
        // Development servers accept their own name (Vite, webpack refuse unknown hosts); the public one is in X-Forwarded-Host.
        headers.set("Host", "localhost:" + route.port());
        return new RequestHead(head.method(), PreviewCredentials.withoutToken(route.forwardTarget()), head.version(), headers);
    }

    /** Removes hop-by-hop fields and those the Connection field names; keeps Upgrade for a WebSocket handshake. */
    private static void dropHopByHop(HttpHeaders headers, boolean keepUpgrade) {
        for (String named : headers.tokens("Connection")) {
            if (!(keepUpgrade && named.equals("upgrade"))) headers.remove(named);
        }
        for (String name : HOP_BY_HOP) {
            if (!(keepUpgrade && name.equals("Upgrade"))) headers.remove(name);
        }
    }

    /** Two-way byte relay after a 101: each side's end of stream is passed on as a half-close. */
    private void tunnel(HttpInput in, OutputStream out) {
        var up = upstream;
        var toUpstream = Thread.ofVirtual().name("preview-tunnel").start(() -> {
            try {
                BodyRelay.copyUntilClose(in, upOut);
                up.shutdownOutput();
            } catch (IOException e) {
                closeUpstream();
            }
        });
        try {
            BodyRelay.copyUntilClose(upIn, out);
            client.shutdownOutput();
            toUpstream.join(Duration.ofSeconds(5));
        } catch (IOException e) {
            log.atDebug().addKeyValue("problem", e.toString()).log("preview tunnel ended");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            close();
        }
    }

    /** Connects to {@code address} unless the kept connection already goes there; returns whether it was kept. */
    private boolean connect(InetSocketAddress address) throws IOException {
        var current = upstream;
        if (current != null && !current.isClosed() && address.equals(upstreamAddress)) return true;
        closeUpstream();
        var socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(address, CONNECT_TIMEOUT_MS);
            upIn = new HttpInput(socket.getInputStream(), BUFFER);
            upOut = new BufferedOutputStream(socket.getOutputStream(), BUFFER);
        } catch (IOException e) {
            closeQuietly(socket);
            throw e;
        }
        upstream = socket;
        upstreamAddress = address;
        return false;
    }

    private void closeUpstream() {
        var current = upstream;
        if (current != null) closeQuietly(current);
    }

    /** Answers with a short text and closes the connection (whatever body the request has is not read). */
    private boolean refuse(OutputStream out, int status, String text) throws IOException {
        byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
        var headers = new HttpHeaders().add("Content-Type", "text/plain; charset=utf-8")
                .add("Content-Length", Integer.toString(body.length)).add("Cache-Control", "no-store").add("Connection", "close");
        out.write(new ResponseHead("HTTP/1.1", status, REASONS.getOrDefault(status, "Error"), headers).toBytes());
        out.write(body);
        out.flush();
        lingeringClose();
        return false;
    }

    /**
     * Half-closes and reads what the client still sends for a moment before the socket closes:
     * closing with unread bytes makes the kernel reset the connection, and a reset can destroy
     * the answer before the client has read it.
     */
    private void lingeringClose() {
        try {
            client.shutdownOutput();
            client.setSoTimeout(1000);
            var in = client.getInputStream();
            byte[] sink = new byte[BUFFER];
            long left = 1 << 20;
            for (int n; left > 0 && (n = in.read(sink)) >= 0; ) left -= n;
        } catch (IOException e) {
            // the client is gone or slow: close now
        }
    }

    private static final Map<Integer, String> REASONS = Map.of(400, "Bad Request", 401, "Unauthorized",
            403, "Forbidden", 404, "Not Found", 410, "Gone", 431, "Request Header Fields Too Large", 502, "Bad Gateway",
            503, "Service Unavailable");

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing only; the connection is gone either way
        }
    }
}
