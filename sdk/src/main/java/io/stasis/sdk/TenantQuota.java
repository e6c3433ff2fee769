package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * What a tenant may hold at once; a null field is unlimited.
 *
 * <pre>{@code
 * TenantQuota quota = TenantQuota.unlimited().withRunningSandboxes(10).withMemoryMb(16_384);
 * }</pre>
 *
 * @param runningSandboxes sandboxes running or paused (hibernated and stopped ones hold no memory and do not count)
 * @param memoryMb         the memory limits of those sandboxes, added up
 * @param diskMb           the disk limits of all the tenant's sandboxes, added up
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TenantQuota(Integer runningSandboxes, Long memoryMb, Long diskMb) {
    public static TenantQuota unlimited() {
        return new TenantQuota(null, null, null);
    }

    public TenantQuota withRunningSandboxes(Integer limit) {
        return new TenantQuota(limit, memoryMb, diskMb);
    }

    public TenantQuota withMemoryMb(Long limit) {
        return new TenantQuota(runningSandboxes, limit, diskMb);
    }

    public TenantQuota withMemoryMb(long limit) {
        return withMemoryMb(Long.valueOf(limit));
    }

    public TenantQuota withDiskMb(Long limit) {
        return new TenantQuota(runningSandboxes, memoryMb, limit);
    }
}
