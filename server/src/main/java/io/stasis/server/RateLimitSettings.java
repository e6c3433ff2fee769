package io.stasis.server;

import io.stasis.core.ratelimit.Rate;
import java.util.Optional;

/**
 * The operator's rate limits, none by default; a tenant's own (its quota's {@code requestsPerSecond},
 * {@code requestBurst}, {@code createsPerMinute}) replace the tenant ones. The root key is never limited.
 *
 * @param tenantRequests     the API calls of each tenant, all its credentials together
 * @param credentialRequests the API calls of each API key or scoped token
 * @param tenantCreates      the creates and forks of each tenant
 */
public record RateLimitSettings(Optional<Rate> tenantRequests, Optional<Rate> credentialRequests, Optional<Rate> tenantCreates) {
    public static final RateLimitSettings NONE = new RateLimitSettings(Optional.empty(), Optional.empty(), Optional.empty());

    /** Applies one rate flag; empty if the flag is not one of these. */
    Optional<RateLimitSettings> with(String flag, String value) {
        return Optional.ofNullable(switch (flag) {
            case "--tenant-requests-per-second" -> new RateLimitSettings(perSecond(flag, value), credentialRequests, tenantCreates);
            case "--credential-requests-per-second" -> new RateLimitSettings(tenantRequests, perSecond(flag, value), tenantCreates);
            case "--tenant-creates-per-minute" -> new RateLimitSettings(tenantRequests, credentialRequests,
                    Optional.of(number(flag, value)).filter(n -> n > 0).map(Rate::perMinute));
            default -> null;
        });
    }

    /** {@code N} (bursts of 2N) or {@code N:BURST}; 0: none. */
    private static Optional<Rate> perSecond(String flag, String value) {
        int colon = value.indexOf(':');
        int perSecond = number(flag, colon < 0 ? value : value.substring(0, colon));
        if (perSecond == 0) return Optional.empty();
        if (colon < 0) return Optional.of(Rate.perSecond(perSecond));
        int burst = number(flag, value.substring(colon + 1));
        if (burst == 0) throw new ServerConfig.UsageException(flag + ": a burst must be 1 or more, was '" + value + "'");
        return Optional.of(new Rate(perSecond, burst));
    }

    private static int number(String flag, String text) {
        try {
            int n = Integer.parseInt(text.strip());
            if (n >= 0 && n <= 1_000_000) return n;
        } catch (NumberFormatException e) {
            // told below
        }
        throw new ServerConfig.UsageException(flag + " must be a whole number from 0 (none) to 1000000, was '" + text + "'");
    }

    static final String USAGE = """
              --tenant-requests-per-second N[:BURST]  each tenant's API calls, all its credentials together: N a
                                       second, bursts of BURST (default 2N); 0: none (default). A tenant's
                                       quota (requestsPerSecond, requestBurst) replaces it. Past it: 429 rate_limited
                                       with Retry-After. The root key is never limited
              --credential-requests-per-second N[:BURST]  each API key's or scoped token's calls (default none)
              --tenant-creates-per-minute N  each tenant's creates and forks, N a minute (default none; its
                                       quota's createsPerMinute replaces it)
            """;
}
