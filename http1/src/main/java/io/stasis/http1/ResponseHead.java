package io.stasis.http1;

import java.nio.charset.StandardCharsets;

/** The head of an HTTP/1.x response: its status line and header fields. */
public record ResponseHead(String version, int status, String reason, HttpHeaders headers) {

    /** An interim response (100 Continue, 103 Early Hints) that another head follows; 101 is final. */
    public boolean isInterim() {
        return status >= 100 && status < 200 && status != 101;
    }

    /** The head as it goes on the wire: the status line, the fields, the empty line. */
    public byte[] toBytes() {
        var out = new StringBuilder(256).append(version).append(' ').append(status).append(' ').append(reason).append("\r\n");
        headers.appendTo(out);
        return out.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }
}
