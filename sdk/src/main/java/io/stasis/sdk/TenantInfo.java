package io.stasis.sdk;

import java.time.Instant;

/**
 * A tenant as the service shows it, with its quota and what it holds now.
 *
 * @param usage counted as the quota counts: sandboxes running or paused, their memory, all its sandboxes' disk
 */
public record TenantInfo(String id, String name, TenantQuota quota, Usage usage, Instant createdAt) {
    public record Usage(int runningSandboxes, long memoryMb, long diskMb) {
    }
}
