package io.stasis.sdk;

/**
 * The answer of {@code GET /healthz}.
 *
 * @param status {@code "ok"} when the server is healthy
 */
public record Health(String status) {
    public boolean isOk() {
        return "ok".equals(status);
    }
}
