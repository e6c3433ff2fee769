package io.stasis.http1;

import java.nio.charset.StandardCharsets;

/** The head of an HTTP/1.x request: its request line and header fields. */
public record RequestHead(String method, String target, String version, HttpHeaders headers) {

    public boolean isHttp10() {
        return version.equals("HTTP/1.0");
    }

    /** Whether the client wants the connection kept after this exchange. */
    public boolean keepAlive() {
        if (headers.hasToken("Connection", "close")) return false;
        return !isHttp10() || headers.hasToken("Connection", "keep-alive");
    }

    public boolean isWebSocketUpgrade() {
        return headers.hasToken("Connection", "upgrade") && headers.hasToken("Upgrade", "websocket");
    }

    public RequestHead withTarget(String newTarget) {
        return new RequestHead(method, newTarget, version, headers);
    }

    /** The head as it goes on the wire: the request line, the fields, the empty line. */
    public byte[] toBytes() {
        var out = new StringBuilder(256).append(method).append(' ').append(target).append(' ').append(version).append("\r\n");
        headers.appendTo(out);
        return out.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }
}
