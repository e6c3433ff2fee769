package io.stasis.sdk;

/**
 * No response arrived within the client's request timeout (see
 * {@link StasisClient.Builder#requestTimeout(java.time.Duration)}).
 */
public class StasisTimeoutException extends StasisConnectionException {
    public StasisTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
