package io.stasis.core.tenant;

/**
 * What a tenant holds, counted as {@link TenantQuota} counts it; also what an operation asks to add.
 *
 * @param runningSandboxes sandboxes running or paused
 * @param memoryMb         their memory limits, added up
 * @param diskMb           the disk limits of all its sandboxes, added up
 */
public record TenantUsage(int runningSandboxes, long memoryMb, long diskMb) {
    public static final TenantUsage NONE = new TenantUsage(0, 0, 0);

    public TenantUsage plus(TenantUsage other) {
        return new TenantUsage(runningSandboxes + other.runningSandboxes, memoryMb + other.memoryMb, diskMb + other.diskMb);
    }

    public TenantUsage minus(TenantUsage other) {
        return new TenantUsage(runningSandboxes - other.runningSandboxes, memoryMb - other.memoryMb, diskMb - other.diskMb);
    }
}
