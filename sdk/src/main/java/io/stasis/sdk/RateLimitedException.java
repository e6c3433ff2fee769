package io.stasis.sdk;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * HTTP 429 {@code rate_limited}: too many calls of this key or its tenant, or creates of its tenant.
 * The server did nothing, so the client retries every call that got it, POSTs too, after the wait
 * the server named (see {@link RetryPolicy}); this is what is left once the policy gave up.
 */
public class RateLimitedException extends QuotaExceededException {
    public RateLimitedException(int status, String code, String errorMessage, Map<String, Object> details, String requestId) {
        super(status, code, errorMessage, details, requestId);
    }

    /** How long the server said to wait ({@code details.retryAfterMs}), if it said. */
    public Optional<Duration> retryAfter() {
        return details().get("retryAfterMs") instanceof Number ms ? Optional.of(Duration.ofMillis(ms.longValue())) : Optional.empty();
    }
}
