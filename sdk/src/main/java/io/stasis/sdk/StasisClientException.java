package io.stasis.sdk;

/**
 * Root of every exception the SDK throws on its own behalf: a failed call to the server
 * ({@link StasisApiException}), a server that cannot be reached ({@link StasisConnectionException}),
 * or a response the SDK cannot understand.
 *
 * <pre>{@code
 * try {
 *     client.sandboxes().get("my-agent");
 * } catch (StasisClientException e) {
 *     log.warn("stasis call failed: {}", e.getMessage());
 * }
 * }</pre>
 */
public class StasisClientException extends RuntimeException {
    public StasisClientException(String message) {
        super(message);
    }

    public StasisClientException(String message, Throwable cause) {
        super(message, cause);
    }
}
