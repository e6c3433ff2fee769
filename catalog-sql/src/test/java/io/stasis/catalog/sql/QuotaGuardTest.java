package io.stasis.catalog.sql;

import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.stasis.core.node.NodeLimits;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.tenant.QuotaGuard;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.testkit.CatalogFixtures;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link QuotaGuard} against a real catalog (core has no in-memory one): what it admits, what it
 * refuses and how it says so, and that reservations keep concurrent admissions within the limit.
 */
class QuotaGuardTest extends FreshCatalog {
    private static final TenantUsage ONE_GIB_SANDBOX = new TenantUsage(1, 1024, 0);

    private QuotaGuard guard;

    @BeforeEach
    void createGuard() {
        guard = new QuotaGuard(catalog, catalog.localNode(), NodeLimits.NONE);
    }

    private TenantId tenantWith(TenantQuota quota) {
        var tenant = new Tenant(TenantId.random(), "t-" + Ids.randomSuffix(), quota, Instant.now());
        catalog.insertTenant(tenant);
        return tenant.id();
    }

    private static TenantQuota runningAtMost(int n) {
        return new TenantQuota(Optional.of(n), Optional.empty(), Optional.empty());
    }

    private static TenantQuota memoryAtMost(long mb) {
        return new TenantQuota(Optional.empty(), Optional.of(mb), Optional.empty());
    }

    private Sandbox insertSandbox(TenantId tenant, SandboxState state, int memoryMb) {
        var s = CatalogFixtures.inTenant(CatalogFixtures.sandbox(Optional.empty(), "tiny", state, T0, new Resources(1.0, memoryMb, 512),
                Map.of(), Map.of()), tenant);
        catalog.insert(s);
        return s;
    }

    private static void assertQuotaExceeded(Throwable thrown, String quota, long limit, long used, long requested) {
        assertThat(thrown).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.QUOTA_EXCEEDED);
            assertThat(e.details()).containsExactlyInAnyOrderEntriesOf(Map.of("quota", quota, "limit", limit, "used", used, "requested", requested));
        });
    }

    @Test
    void admitsWithinTheQuotaAndReturnsTheOperationsResult() {
        var t = tenantWith(new TenantQuota(Optional.of(2), Optional.of(2048L), Optional.empty()));
        insertSandbox(t, SandboxState.RUNNING, 1024);

        assertThat(guard.admit(t, ONE_GIB_SANDBOX, () -> "created")).isEqualTo("created");
        assertThat(guard.usage(t)).isEqualTo(new TenantUsage(1, 1024, Resources.DEFAULT_DISK_MB));
    }

    @Test
    void refusesPastRunningSandboxesWithoutRunningTheOperation() {
        var t = tenantWith(runningAtMost(2));
        insertSandbox(t, SandboxState.RUNNING, 1024);
        insertSandbox(t, SandboxState.PAUSED, 1024);
        var ran = new AtomicBoolean();

        var thrown = catchThrowable(() -> guard.admit(t, ONE_GIB_SANDBOX, () -> ran.getAndSet(true)));

        assertQuotaExceeded(thrown, "runningSandboxes", 2, 2, 1);
        assertThat(thrown).hasMessageContaining("runningSandboxes").hasMessageContaining(t.value());
        assertThat(ran).isFalse();
    }

    @Test
    void refusesPastMemoryMb() {
        var t = tenantWith(memoryAtMost(3000));
        insertSandbox(t, SandboxState.RUNNING, 1024);
        insertSandbox(t, SandboxState.PAUSED, 1000);

        assertThat(guard.admit(t, new TenantUsage(1, 976, 0), () -> 1)).isEqualTo(1); // exactly at the limit
        var thrown = catchThrowable(() -> guard.admit(t, new TenantUsage(1, 977, 0), () -> 1));

        assertQuotaExceeded(thrown, "memoryMb", 3000, 2024, 977);
    }

    @Test
    void aForkOfSeveralSandboxesIsCheckedAsAWhole() {
        var t = tenantWith(new TenantQuota(Optional.of(4), Optional.of(8192L), Optional.empty()));
        insertSandbox(t, SandboxState.RUNNING, 1024);

        guard.admit(t, new TenantUsage(3, 3072, 0), () -> null);
        var thrown = catchThrowable(() -> guard.admit(t, new TenantUsage(4, 4096, 0), () -> null));

        assertQuotaExceeded(thrown, "runningSandboxes", 4, 1, 4);
    }

    @Test
    void sandboxesHoldingNoMemoryDoNotCount() {
        var t = tenantWith(new TenantQuota(Optional.of(1), Optional.of(1024L), Optional.empty()));
        insertSandbox(t, new SandboxState.Hibernated(CheckpointId.random(), 1, T0), 4096);
        insertSandbox(t, new SandboxState.Stopped("idle"), 4096);
        insertSandbox(t, SandboxState.DELETED, 4096);

        assertThat(guard.admit(t, ONE_GIB_SANDBOX, () -> "resumed")).isEqualTo("resumed");
    }

    @Test
    void otherTenantsUsageDoesNotCount() {
        var t = tenantWith(runningAtMost(1));
        var other = tenantWith(runningAtMost(1));
        insertSandbox(other, SandboxState.RUNNING, 1024);
        insertSandbox(TenantId.DEFAULT, SandboxState.RUNNING, 1024);

        assertThat(guard.admit(t, ONE_GIB_SANDBOX, () -> true)).isTrue();
    }

    @Test
    void theDefaultTenantAndUnknownTenantsAreUnlimited() {
        for (int i = 0; i < 5; i++) insertSandbox(TenantId.DEFAULT, SandboxState.RUNNING, 1 << 20);

        assertThat(guard.admit(TenantId.DEFAULT, new TenantUsage(1000, 1L << 40, 1L << 40), () -> true)).isTrue();
        assertThat(guard.admit(TenantId.random(), new TenantUsage(1000, 1L << 40, 1L << 40), () -> true)).isTrue();
    }

    @Test
    void aLimitLoweredBelowTheUsageStopsOnlyGrowth() {
        var t = tenantWith(runningAtMost(0));
        insertSandbox(t, SandboxState.RUNNING, 1024);

        assertThat(guard.admit(t, TenantUsage.NONE, () -> "nothing more")).isEqualTo("nothing more");
        assertQuotaExceeded(catchThrowable(() -> guard.admit(t, ONE_GIB_SANDBOX, () -> null)),
                "runningSandboxes", 0, 1, 1);
    }

    @Test
    void aReservationIsReleasedWhenTheOperationThrows() {
        var t = tenantWith(runningAtMost(1));
        var failure = new IllegalStateException("runtime failed");

        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> guard.admit(t, ONE_GIB_SANDBOX, () -> {
                throw failure;
            })).isSameAs(failure);
        }
        assertThatThrownBy(() -> guard.admit(t, ONE_GIB_SANDBOX, () -> {
            throw new StasisException(ErrorCode.RUNTIME_FAILED, "no");
        })).isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_FAILED));

        // Were any of those reservations kept, this would exceed the limit of one.
        assertThat(guard.admit(t, ONE_GIB_SANDBOX, () -> "fine")).isEqualTo("fine");
    }

    @Test
    void aReservationIsHeldWhileTheOperationRunsAndReleasedAfter() {
        var t = tenantWith(runningAtMost(1));

        var inner = guard.admit(t, ONE_GIB_SANDBOX, () -> catchThrowable(
                () -> guard.admit(t, ONE_GIB_SANDBOX, () -> null)));

        assertQuotaExceeded(inner, "runningSandboxes", 1, 1, 1);
        assertThat(guard.admit(t, ONE_GIB_SANDBOX, () -> "after")).isEqualTo("after");
    }

    /**
     * Operations still in flight hold their reservations: with the limit at 5 and 50 admissions at
     * once, all blocked until the refused ones are counted, exactly 5 are admitted.
     */
    @Test
    void concurrentAdmissionsFromManyVirtualThreadsNeverExceedTheLimit() throws Exception {
        int limit = 5;
        int contenders = 50;
        var t = tenantWith(new TenantQuota(Optional.of(limit), Optional.of(limit * 1024L), Optional.empty()));
        var start = new CountDownLatch(1);
        var finish = new CountDownLatch(1);
        var refused = new CountDownLatch(contenders - limit);
        var inFlight = new AtomicInteger();
        var mostInFlight = new AtomicInteger();
        var futures = new ArrayList<Future<String>>();
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < contenders; i++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    try {
                        return guard.admit(t, ONE_GIB_SANDBOX, () -> {
                            mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
                            try {
                                assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
                            } catch (InterruptedException e) {
                                throw new IllegalStateException(e);
                            }
                            inFlight.decrementAndGet();
                            return "admitted";
                        });
                    } catch (StasisException e) {
                        refused.countDown();
                        return e.code().wireName();
                    }
                }));
            }
            start.countDown();
            assertThat(refused.await(30, TimeUnit.SECONDS)).as("the refusals arrive while the admitted hold on").isTrue();
            finish.countDown();
            var outcomes = new ArrayList<String>();
            for (var f : futures) outcomes.add(f.get(30, TimeUnit.SECONDS));

            assertThat(outcomes).filteredOn("admitted"::equals).hasSize(limit);
            assertThat(outcomes).filteredOn("quota_exceeded"::equals).hasSize(contenders - limit);
        }
        assertThat(mostInFlight).hasValue(limit);
        // Every reservation is released: the whole quota is free again.
        assertThat(guard.admit(t, new TenantUsage(limit, limit * 1024L, 0), () -> "all at once")).isEqualTo("all at once");
    }

    /**
     * Operations that record their sandbox in the catalog, as a create does: whatever the
     * interleaving, the tenant never ends up holding more than its quota.
     */
    @Test
    void concurrentCreatesThatRecordTheirSandboxStayWithinTheLimit() throws Exception {
        int limit = 4;
        var t = tenantWith(new TenantQuota(Optional.of(limit), Optional.empty(), Optional.empty()));
        var start = new CountDownLatch(1);
        var admitted = new AtomicInteger();
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            var futures = new ArrayList<Future<?>>();
            for (int i = 0; i < 40; i++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    try {
                        guard.admit(t, ONE_GIB_SANDBOX, () -> {
                            insertSandbox(t, SandboxState.RUNNING, 1024);
                            admitted.incrementAndGet();
                            Thread.yield();
                            return null;
                        });
                    } catch (StasisException e) {
                        assertThat(e.code()).isEqualTo(ErrorCode.QUOTA_EXCEEDED);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (var f : futures) f.get(30, TimeUnit.SECONDS);
        }

        assertThat(admitted.get()).isBetween(1, limit);
        assertThat(catalog.usage(t).runningSandboxes()).isEqualTo(admitted.get());
        // Once no operation is in flight, only the catalog counts: the remaining room is admitted, and then no more.
        int room = limit - admitted.get();
        guard.admit(t, new TenantUsage(room, room * 1024L, 0), () -> {
            for (int i = 0; i < room; i++) insertSandbox(t, SandboxState.RUNNING, 1024);
            return null;
        });
        assertQuotaExceeded(catchThrowable(() -> guard.admit(t, ONE_GIB_SANDBOX, () -> null)), "runningSandboxes", limit, limit, 1);
    }
}
