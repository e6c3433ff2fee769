package io.stasis.core.tenant;

import io.stasis.core.error.StasisException;
import java.util.Optional;

/**
 * What a tenant may hold at once; an empty field is unlimited.
 *
 * @param runningSandboxes sandboxes holding memory: running or paused (hibernated and stopped ones do not count)
 * @param memoryMb         the memory limits of those sandboxes, added up
 * @param diskMb           the disk limits of all the tenant's sandboxes, added up, whatever their state
 */
public record TenantQuota(Optional<Integer> runningSandboxes, Optional<Long> memoryMb, Optional<Long> diskMb) {
    public static final TenantQuota UNLIMITED = new TenantQuota(Optional.empty(), Optional.empty(), Optional.empty());

    public TenantQuota {
        runningSandboxes.ifPresent(n -> {
            if (n < 0) throw StasisException.invalid("quota.runningSandboxes", "must be 0 or more, was " + n);
        });
        memoryMb.ifPresent(n -> {
            if (n < 0) throw StasisException.invalid("quota.memoryMb", "must be 0 or more, was " + n);
        });
        diskMb.ifPresent(n -> {
            if (n < 0) throw StasisException.invalid("quota.diskMb", "must be 0 or more, was " + n);
        });
    }

    /** This quota with the fields of {@code change} that are present replacing its own. */
    public TenantQuota with(TenantQuota change) {
        return new TenantQuota(change.runningSandboxes.or(() -> runningSandboxes), change.memoryMb.or(() -> memoryMb),
                change.diskMb.or(() -> diskMb));
    }
}
