package io.stasis.network.linux.proxy;

import io.stasis.core.secret.SecretInjection;
import io.stasis.http1.BodyFraming;
import io.stasis.http1.BodyRelay;
import io.stasis.http1.HeadReader;
import io.stasis.http1.HttpFramingException;
import io.stasis.http1.HttpInput;
import io.stasis.http1.RequestHead;
import io.stasis.http1.ResponseHead;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries TLS connections whose name has a header rule in the sandbox's policy by intercepting
 * them; hands every other connection to the relay unchanged.
 *
 * <p>An intercepted connection: TLS towards the sandbox with a leaf for the name signed by the
 * sandbox's own CA (ALPN {@code http/1.1} only), then each HTTP/1.1 request is read
 * ({@link io.stasis.http1}), its rule's headers set (replacing any the sandbox sent under those names), and
 * sent over the proxy's own TLS connection to the upstream, verified against the trusted CAs with
 * hostname verification for the name. Responses stream back on a second thread, in order; 1xx
 * answers pass through, and a 101 turns both directions into a byte relay. The proxy answers itself
 * with 502 when a secret the rule names is missing (naming it, never a value) or the upstream cannot
 * be reached or verified, with 421 when a request's Host is not the TLS name, and with 400 when the
 * framing is broken; the connection then closes. Header values are never logged.
 */
final class InterceptingCarrier implements Carrier {
    private static final Logger log = LoggerFactory.getLogger(InterceptingCarrier.class);
    private static final int HANDSHAKE_MILLIS = 10_000;
    private static final String[] ALPN = {"http/1.1"};

    private final Carrier relay;
    private final Interception interception;
    private final Duration connectTimeout;
    private final ThreadFactory downstreamThreads;

    InterceptingCarrier(Carrier relay, Interception interception, Duration connectTimeout, ThreadFactory downstreamThreads) {
        this.relay = relay;
        this.interception = interception;
        this.connectTimeout = connectTimeout;
        this.downstreamThreads = downstreamThreads;
    }

    @Override
    public void carry(AllowedFlow flow, NativeSocket client, Teardown teardown) throws IOException {
        if (flow.protocol() != Protocol.TLS || flow.name().isEmpty()) {
            relay.carry(flow, client, teardown);
            return;
        }
        Optional<SecretInjection.Resolved> rule = interception.headers().headersFor(flow.sandbox(), flow.name().get());
        if (rule.isEmpty()) {
            relay.carry(flow, client, teardown);
            return;
        }
        new Session(flow, rule.get(), teardown).run(client);
    }

    /** An item for the response thread, in request order. */
    private sealed interface Pending permits Exchange, LocalAnswer, End {
    }

    /** A request sent upstream; {@code upgrade} is completed with whether the answer was 101. */
    private record Exchange(String method, CompletableFuture<Boolean> upgrade) implements Pending {
    }

    /** An answer of the proxy's own, after which the connection closes. */
    private record LocalAnswer(byte[] response) implements Pending {
    }

    private record End() implements Pending {
    }

    private final class Session {
        private final AllowedFlow flow;
        private final String name;
        private final SecretInjection.Resolved rule;
        private final Teardown teardown;
        private final BlockingQueue<Pending> pending = new LinkedBlockingQueue<>();
        private SSLSocket upstream;
        private SSLSocket clientTls;

        Session(AllowedFlow flow, SecretInjection.Resolved rule, Teardown teardown) {
            this.flow = flow;
            this.name = flow.name().orElseThrow();
            this.rule = rule;
            this.teardown = teardown;
        }

        void run(NativeSocket client) throws IOException {
            var adapter = new NativeSocketAdapter(client, flow.upstream());
            var factory = interception.authorities().serverContext(flow.sandbox(), name).getSocketFactory();
            // The ClientHello was read to find the name: the TLS layer reads it again first.
            var tls = (SSLSocket) factory.createSocket(adapter, new ByteArrayInputStream(flow.head()), true);
            teardown.add(tls);
            clientTls = tls;
            tls.setUseClientMode(false);
            var params = tls.getSSLParameters();
            params.setApplicationProtocols(ALPN);
            tls.setSSLParameters(params);
            adapter.setSoTimeout(HANDSHAKE_MILLIS);
            tls.startHandshake();
            adapter.setSoTimeout(0);
            log.atDebug().addKeyValue("sandbox", flow.sandbox()).addKeyValue("name", name).addKeyValue("rule", rule.domain())
                    .log("egress connection intercepted for header rules");

            var fromClient = new HttpInput(tls.getInputStream());
            OutputStream toClient = new BufferedOutputStream(tls.getOutputStream());
            Thread responses = downstreamThreads.newThread(() -> responses(toClient));
            responses.start();
            try {
                requests(fromClient);
            } catch (IOException e) {
                log.atDebug().addKeyValue("sandbox", flow.sandbox()).addKeyValue("name", name).addKeyValue("error", e.getMessage())
                        .log("intercepted connection ended by an error on the sandbox side");
                teardown.abort();
            } finally {
                pending.add(new End());
                join(responses);
                if (upstream != null) upstream.close();
                tls.close();
            }
        }

        /** Reads the sandbox's requests and sends them upstream, until it closes or an answer of our own ends the connection. */
        private void requests(HttpInput fromClient) throws IOException {
            OutputStream toUpstream = null;
            while (true) {
                RequestHead head;
                try {
                    head = HeadReader.readRequest(fromClient);
                } catch (HttpFramingException e) {
                    answer(e.status(), e.status() == 431 ? "Request Header Fields Too Large" : "Bad Request",
                            "Stasis egress proxy: malformed request (" + e.getMessage() + ")");
                    return;
                }
                if (head == null) return;
                if (!rule.missingSecrets().isEmpty()) {
                    answer(502, "Bad Gateway", "Stasis egress proxy: the header rule for " + rule.domain() + " needs secrets that do not exist: "
                            + String.join(", ", rule.missingSecrets()));
                    return;
                }
                var host = head.headers().first("Host").map(InterceptingCarrier::hostPart);
                if (host.isPresent() && !host.get().equalsIgnoreCase(name)) {
                    answer(421, "Misdirected Request", "Stasis egress proxy: this connection is for " + name + ", not " + host.get());
                    return;
                }
                BodyFraming body;
                try {
                    body = BodyFraming.ofRequest(head);
                } catch (HttpFramingException e) {
                    answer(400, "Bad Request", "Stasis egress proxy: " + e.getMessage());
                    return;
                }
                if (toUpstream == null) {
                    try {
                        toUpstream = new BufferedOutputStream(connectUpstream().getOutputStream());
                    } catch (IOException e) {
                        log.atInfo().addKeyValue("sandbox", flow.sandbox()).addKeyValue("name", name).addKeyValue("upstream", flow.upstream())
                                .addKeyValue("error", e.getMessage()).log("intercepted connection: upstream unreachable or not verified");
                        answer(502, "Bad Gateway", "Stasis egress proxy could not reach or verify " + name + ": " + e.getMessage());
                        return;
                    }
                }
                var upgrade = head.headers().has("Upgrade") ? new CompletableFuture<Boolean>() : null;
                pending.add(new Exchange(head.method(), upgrade));
                rule.headers().forEach(head.headers()::set);
                toUpstream.write(head.toBytes());
                BodyRelay.copy(body, fromClient, toUpstream, 400);
                if (upgrade != null && switched(upgrade)) {
                    BodyRelay.copyUntilClose(fromClient, toUpstream);
                    upstream.shutdownOutput(); // the sandbox's half-close, passed on
                    return;
                }
            }
        }

        private SSLSocket connectUpstream() throws IOException {
            Socket raw = new Socket();
            teardown.add(raw);
            raw.connect(flow.upstream(), (int) connectTimeout.toMillis());
            raw.setTcpNoDelay(true);
            InetSocketAddress to = flow.upstream();
            var socket = (SSLSocket) interception.upstream().getSocketFactory().createSocket(raw, name, to.getPort(), true);
            teardown.add(socket);
            var params = socket.getSSLParameters();
            params.setEndpointIdentificationAlgorithm("HTTPS");
            params.setServerNames(List.of(new SNIHostName(name)));
            params.setApplicationProtocols(ALPN);
            socket.setSSLParameters(params);
            raw.setSoTimeout(HANDSHAKE_MILLIS);
            socket.startHandshake();
            raw.setSoTimeout(0);
            upstream = socket;
            return socket;
        }

        /** Streams the answers back in request order; ends the connection on an answer of our own, an error or the end. */
        private void responses(OutputStream toClient) {
            Exchange current = null;
            try {
                HttpInput fromUpstream = null;
                while (true) {
                    Pending next = pending.take();
                    switch (next) {
                        case End e -> {
                            return;
                        }
                        case LocalAnswer a -> {
                            toClient.write(a.response());
                            finish(toClient);
                            return;
                        }
                        case Exchange x -> {
                            current = x;
                            if (fromUpstream == null) fromUpstream = new HttpInput(upstream.getInputStream());
                            if (!respond(x, fromUpstream, toClient)) {
                                finish(toClient);
                                return;
                            }
                            current = null;
                        }
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                teardown.abort();
            } catch (IOException e) {
                log.atDebug().addKeyValue("sandbox", flow.sandbox()).addKeyValue("name", name).addKeyValue("error", e.getMessage())
                        .log("intercepted connection ended by an error on the upstream side");
                teardown.abort();
            } finally {
                if (current != null && current.upgrade() != null) current.upgrade().complete(false);
            }
        }

        /**
         * Ends the connection after its last answer: close_notify and FIN towards the sandbox once
         * everything is written, then the rest is torn down (the request side stops reading).
         */
        private void finish(OutputStream toClient) {
            try {
                toClient.flush();
                clientTls.shutdownOutput();
            } catch (IOException e) {
                // the sandbox is gone already
            }
            teardown.abort();
        }

        /** Forwards one answer (after any 1xx); false when the connection must end after it. */
        private boolean respond(Exchange x, HttpInput fromUpstream, OutputStream toClient) throws IOException {
            while (true) {
                ResponseHead head = HeadReader.readResponse(fromUpstream);
                if (head == null) return false; // the upstream closed with a request outstanding
                int status = head.status();
                if (status == 101 && x.upgrade() != null) {
                    toClient.write(head.toBytes());
                    toClient.flush();
                    x.upgrade().complete(true);
                    BodyRelay.copyUntilClose(fromUpstream, toClient);
                    return false;
                }
                if (status / 100 == 1) {
                    toClient.write(head.toBytes());
                    toClient.flush();
                    continue;
                }
                if (x.upgrade() != null) x.upgrade().complete(false);
                var body = BodyFraming.ofResponse(x.method(), head); // before the head goes out: a fault ends the connection cleanly
                toClient.write(head.toBytes());
                BodyRelay.copy(body, fromUpstream, toClient, 502);
                return !(body instanceof BodyFraming.UntilClose);
            }
        }

        private void answer(int status, String reason, String text) {
            byte[] body = (text + "\n").getBytes(StandardCharsets.UTF_8);
            String head = "HTTP/1.1 " + status + " " + reason + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
                    + body.length + "\r\nConnection: close\r\n\r\n";
            byte[] all = new byte[head.length() + body.length];
            System.arraycopy(head.getBytes(StandardCharsets.ISO_8859_1), 0, all, 0, head.length());
            System.arraycopy(body, 0, all, head.length(), body.length);
            log.atInfo().addKeyValue("sandbox", flow.sandbox()).addKeyValue("name", name).addKeyValue("status", status)
                    .log("intercepted connection answered by the proxy: " + text);
            pending.add(new LocalAnswer(all));
        }

        private boolean switched(CompletableFuture<Boolean> upgrade) throws IOException {
            try {
                return upgrade.get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted waiting for the upgrade answer");
            } catch (ExecutionException e) {
                return false;
            }
        }

        private void join(Thread responses) {
            boolean interrupted = false;
            while (true) {
                try {
                    responses.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                    teardown.abort();
                }
            }
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /** The host of a Host header, without port or IPv6 brackets, lowercase, no trailing dot. */
    static String hostPart(String host) {
        String h = host.strip();
        if (h.startsWith("[")) {
            int end = h.indexOf(']');
            h = end < 0 ? h : h.substring(1, end);
        } else {
            int colon = h.lastIndexOf(':');
            if (colon >= 0) h = h.substring(0, colon);
        }
        h = h.toLowerCase(Locale.ROOT);
        return h.endsWith(".") ? h.substring(0, h.length() - 1) : h;
    }
}
