package io.stasis.server.preview;

/**
 * A message the proxy cannot frame: a head that is not HTTP/1.x, too large, or cut short; a body
 * whose length or chunks are malformed. {@link #status()} is what to answer the client when the
 * fault is on its side (400, 431), or 502 when it is the upstream's.
 */
final class HttpFramingException extends Exception {
    private final int status;

    HttpFramingException(int status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    int status() {
        return status;
    }
}
