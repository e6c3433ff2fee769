package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

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
 * @param runtimes         the runtimes its sandboxes may start in ({@code ["gvisor"]} holds it to gVisor); null: any
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TenantQuota(Integer runningSandboxes, Long memoryMb, Long diskMb, List<String> runtimes) {
    public TenantQuota(Integer runningSandboxes, Long memoryMb, Long diskMb) {
        this(runningSandboxes, memoryMb, diskMb, null);
    }

    public static TenantQuota unlimited() {
        return new TenantQuota(null, null, null, null);
    }

    public TenantQuota withRunningSandboxes(Integer limit) {
        return new TenantQuota(limit, memoryMb, diskMb, runtimes);
    }

    public TenantQuota withMemoryMb(Long limit) {
        return new TenantQuota(runningSandboxes, limit, diskMb, runtimes);
    }

    public TenantQuota withMemoryMb(long limit) {
        return withMemoryMb(Long.valueOf(limit));
    }

    public TenantQuota withDiskMb(Long limit) {
        return new TenantQuota(runningSandboxes, memoryMb, limit, runtimes);
    }

    /** Holds the tenant to these runtimes: {@code withRuntimes("gvisor")}. */
    public TenantQuota withRuntimes(String... names) {
        return new TenantQuota(runningSandboxes, memoryMb, diskMb, List.of(names));
    }
}
