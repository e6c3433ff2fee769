package io.stasis.core.tenant;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.ratelimit.Rate;
import io.stasis.core.sandbox.RuntimeKind;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What a tenant may hold at once, and how fast it may call; an empty field of what it holds is
 * unlimited, an empty rate is the operator's default (none unless the service was started with one).
 *
 * @param runningSandboxes  sandboxes holding memory: running or paused (hibernated and stopped ones do not count)
 * @param memoryMb          the memory limits of those sandboxes, added up
 * @param diskMb            the disk limits of all the tenant's sandboxes, added up, whatever their state
 * @param runtimes          the runtimes its sandboxes may start in (e.g. only gVisor); empty: any the service runs
 * @param requestsPerSecond the API calls of all its credentials together, a second on average
 * @param requestBurst      how many of those may come at once after a quiet spell (default: twice the rate)
 * @param createsPerMinute  its creates and forks (calls, whatever their count), a minute; all at once after a quiet minute
 */
public record TenantQuota(Optional<Integer> runningSandboxes, Optional<Long> memoryMb, Optional<Long> diskMb,
                          Optional<Set<RuntimeKind>> runtimes, Optional<Integer> requestsPerSecond, Optional<Integer> requestBurst,
                          Optional<Integer> createsPerMinute) {
    public static final TenantQuota UNLIMITED = new TenantQuota(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());
    /** The largest rate a quota may name. */
    public static final int MAX_RATE = 1_000_000;

    /** A quota that holds the tenant to no runtime. */
    public TenantQuota(Optional<Integer> runningSandboxes, Optional<Long> memoryMb, Optional<Long> diskMb) {
        this(runningSandboxes, memoryMb, diskMb, Optional.empty());
    }

    /** A quota at the operator's rates. */
    public TenantQuota(Optional<Integer> runningSandboxes, Optional<Long> memoryMb, Optional<Long> diskMb, Optional<Set<RuntimeKind>> runtimes) {
        this(runningSandboxes, memoryMb, diskMb, runtimes, Optional.empty(), Optional.empty(), Optional.empty());
    }

    public TenantQuota {
        runtimes = runtimes.map(kinds -> {
            if (kinds.isEmpty()) throw StasisException.invalid("quota.runtimes", "names at least one runtime (null: any)");
            return Set.copyOf(EnumSet.copyOf(kinds));
        });
        runningSandboxes.ifPresent(n -> {
            if (n < 0) throw StasisException.invalid("quota.runningSandboxes", "must be 0 or more, was " + n);
        });
        memoryMb.ifPresent(n -> {
            if (n < 0) throw StasisException.invalid("quota.memoryMb", "must be 0 or more, was " + n);
        });
        diskMb.ifPresent(n -> {
            if (n < 0) throw StasisException.invalid("quota.diskMb", "must be 0 or more, was " + n);
        });
        requireRate("quota.requestsPerSecond", requestsPerSecond);
        requireRate("quota.requestBurst", requestBurst);
        requireRate("quota.createsPerMinute", createsPerMinute);
    }

    private static void requireRate(String field, Optional<Integer> rate) {
        rate.ifPresent(n -> {
            if (n < 1 || n > MAX_RATE) throw StasisException.invalid(field, "must be 1 to " + MAX_RATE + ", was " + n);
        });
    }

    /**
     * The rate the tenant's calls are held to: its own rate and burst where it has them, the
     * operator's {@code serviceDefault} for the rest; empty if neither names a rate.
     */
    public Optional<Rate> requestRate(Optional<Rate> serviceDefault) {
        if (requestsPerSecond.isPresent()) {
            int perSecond = requestsPerSecond.get();
            return Optional.of(new Rate(perSecond, requestBurst.orElse(Rate.perSecond(perSecond).burst())));
        }
        return serviceDefault.map(rate -> new Rate(rate.perSecond(), requestBurst.orElse(rate.burst())));
    }

    /** The rate of the tenant's creates: its own, else the operator's; empty if neither names one. */
    public Optional<Rate> createRate(Optional<Rate> serviceDefault) {
        return createsPerMinute.map(Rate::perMinute).or(() -> serviceDefault);
    }

    /** This quota with the fields of {@code change} that are present replacing its own. */
    public TenantQuota with(TenantQuota change) {
        return new TenantQuota(change.runningSandboxes.or(() -> runningSandboxes), change.memoryMb.or(() -> memoryMb),
                change.diskMb.or(() -> diskMb), change.runtimes.or(() -> runtimes), change.requestsPerSecond.or(() -> requestsPerSecond),
                change.requestBurst.or(() -> requestBurst), change.createsPerMinute.or(() -> createsPerMinute));
    }

    /** The runtime of a create that names none: the service's default if the tenant may use it, else the first it may. */
    public RuntimeKind runtimeFor(RuntimeKind serviceDefault) {
        if (allows(serviceDefault)) return serviceDefault;
        return runtimes.orElseThrow().stream().min(Comparator.comparing(RuntimeKind::wireName)).orElseThrow();
    }

    /** Whether the tenant's sandboxes may start in {@code runtime}. */
    public boolean allows(RuntimeKind runtime) {
        return runtimes.map(kinds -> kinds.contains(runtime)).orElse(true);
    }

    /**
     * Refuses, {@code forbidden}, to start anything of {@code tenant} in a runtime its quota does not allow.
     *
     * @param what what would start: "create", "fork of sbx_...", "resume of sbx_..."
     */
    public void requireRuntime(TenantId tenant, RuntimeKind runtime, String what) {
        if (allows(runtime)) return;
        var allowed = RuntimeKind.wireNames(runtimes.orElseThrow());
        throw new StasisException(ErrorCode.FORBIDDEN, "tenant " + tenant + " may run sandboxes only in " + String.join(", ", allowed)
                + "; the " + what + " would run in " + runtime.wireName(), Map.of("runtime", runtime.wireName(), "allowed", allowed));
    }
}
