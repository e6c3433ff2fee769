package io.stasis.network.linux.proxy;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

/** The two kinds of connection the proxy receives, and how each is read and refused. */
enum Protocol {
    /** Port 443 traffic: the name is the ClientHello's SNI. A refusal is a plain close: there is no TLS session to speak in. */
    TLS("tls", 16 * 1024) {
        @Override
        HeadParser parser() {
            return new ClientHelloParser(maxHeadBytes());
        }

        @Override
        byte[] refusal(String rule, Optional<String> name) {
            return new byte[0];
        }

        @Override
        byte[] unreachable() {
            return new byte[0];
        }
    },
    /** Port 80 traffic: the name is the request's Host. Refusals are answered, so a human sees why. */
    HTTP("http", 64 * 1024) {
        @Override
        HeadParser parser() {
            return new HttpHeadParser();
        }

        @Override
        byte[] refusal(String rule, Optional<String> name) {
            String what = name.map(n -> "'" + n + "'").orElse("this connection");
            return response("403 Forbidden", "Stasis egress policy refused " + what + " (" + rule + ")\n");
        }

        @Override
        byte[] unreachable() {
            return response("502 Bad Gateway", "Stasis egress proxy could not reach the upstream server\n");
        }
    };

    private final String wireName;
    private final int maxHeadBytes;

    Protocol(String wireName, int maxHeadBytes) {
        this.wireName = wireName;
        this.maxHeadBytes = maxHeadBytes;
    }

    /** As {@code EgressAttempt.protocol} names it. */
    String wireName() {
        return wireName;
    }

    /** The most the proxy buffers before it must know the name. */
    int maxHeadBytes() {
        return maxHeadBytes;
    }

    abstract HeadParser parser();

    /** What the client is sent before the close when the policy refuses it. */
    abstract byte[] refusal(String rule, Optional<String> name);

    /** What the client is sent before the close when the upstream server cannot be reached. */
    abstract byte[] unreachable();

    private static byte[] response(String status, String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + status + "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + b.length
                + "\r\nConnection: close\r\n\r\n";
        return (head + body).getBytes(StandardCharsets.UTF_8);
    }
}
