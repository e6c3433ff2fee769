package io.stasis.http1;

import java.io.IOException;

/**
 * A message that cannot be framed: a head that is not HTTP/1.x, too large, or cut short; a body
 * whose length or chunks are malformed or cut short. The connection cannot continue after one.
 * {@link #status()} is what a proxy answers when nothing of the answer has gone out yet: 400 or 431
 * for a fault of the client's request, 502 for a fault of the server's response.
 *
 * <p>An {@link IOException}, since it ends the connection as one would; callers that answer it
 * catch it before {@code IOException}.
 */
public final class HttpFramingException extends IOException {
    private final int status;

    public HttpFramingException(int status, String message) {
        super(message);
        this.status = status;
    }

    public int status() {
        return status;
    }
}
