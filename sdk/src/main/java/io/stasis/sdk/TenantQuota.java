package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * What a tenant may hold at once, and how fast it may call; a null field is unlimited (a null rate:
 * the operator's, if the service was started with one).
 *
 * <pre>{@code
 * TenantQuota quota = TenantQuota.unlimited().withRunningSandboxes(10).withMemoryMb(16_384).withRequestsPerSecond(20, 40);
 * }</pre>
 *
 * @param runningSandboxes  sandboxes running or paused (hibernated and stopped ones hold no memory and do not count)
 * @param memoryMb          the memory limits of those sandboxes, added up
 * @param diskMb            the disk limits of all the tenant's sandboxes, added up
 * @param runtimes          the runtimes its sandboxes may start in ({@code ["gvisor"]} holds it to gVisor); null: any
 * @param requestsPerSecond the API calls of all its credentials together, a second on average (past it: 429 rate_limited)
 * @param requestBurst      how many calls may come at once after a quiet spell (null: twice the rate)
 * @param createsPerMinute  its creates and forks, a minute
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TenantQuota(Integer runningSandboxes, Long memoryMb, Long diskMb, List<String> runtimes, Integer requestsPerSecond,
                          Integer requestBurst, Integer createsPerMinute) {
    public TenantQuota(Integer runningSandboxes, Long memoryMb, Long diskMb) {
        this(runningSandboxes, memoryMb, diskMb, null);
    }

    public TenantQuota(Integer runningSandboxes, Long memoryMb, Long diskMb, List<String> runtimes) {
        this(runningSandboxes, memoryMb, diskMb, runtimes, null, null, null);
    }

    public static TenantQuota unlimited() {
        return new TenantQuota(null, null, null, null);
    }

    public TenantQuota withRunningSandboxes(Integer limit) {
        return new TenantQuota(limit, memoryMb, diskMb, runtimes, requestsPerSecond, requestBurst, createsPerMinute);
    }

    public TenantQuota withMemoryMb(Long limit) {
        return new TenantQuota(runningSandboxes, limit, diskMb, runtimes, requestsPerSecond, requestBurst, createsPerMinute);
    }

    public TenantQuota withMemoryMb(long limit) {
        return withMemoryMb(Long.valueOf(limit));
    }

    public TenantQuota withDiskMb(Long limit) {
        return new TenantQuota(runningSandboxes, memoryMb, limit, runtimes, requestsPerSecond, requestBurst, createsPerMinute);
    }

    /** Holds the tenant to these runtimes: {@code withRuntimes("gvisor")}. */
    public TenantQuota withRuntimes(String... names) {
        return new TenantQuota(runningSandboxes, memoryMb, diskMb, List.of(names), requestsPerSecond, requestBurst, createsPerMinute);
    }

    /** Holds the tenant's calls to {@code perSecond} on average, {@code burst} at once. */
    public TenantQuota withRequestsPerSecond(int perSecond, int burst) {
        return new TenantQuota(runningSandboxes, memoryMb, diskMb, runtimes, perSecond, burst, createsPerMinute);
    }

    /** Holds the tenant's creates and forks to {@code perMinute}. */
    public TenantQuota withCreatesPerMinute(int perMinute) {
        return new TenantQuota(runningSandboxes, memoryMb, diskMb, runtimes, requestsPerSecond, requestBurst, perMinute);
    }
}
