package io.stasis.sdk;

/**
 * The server could not be reached, or the connection broke before a complete response arrived.
 * The message names the server URL, e.g. {@code cannot connect to http://127.0.0.1:7070
 * (GET /v1/sandboxes): Connection refused}.
 */
public class StasisConnectionException extends StasisClientException {
    public StasisConnectionException(String message, Throwable cause) {
        super(message, cause);
    }
}
