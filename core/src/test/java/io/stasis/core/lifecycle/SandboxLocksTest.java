package io.stasis.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.tenant.TenantId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class SandboxLocksTest {
    private static final TenantId TENANT = TenantId.DEFAULT;

    @Test
    void ofManyCallsGivingOneNameAtOnceExactlyOneGetsIt() throws Exception {
        var locks = new SandboxLocks();
        Set<String> catalog = ConcurrentHashMap.newKeySet();
        int callers = 12;
        var start = new CyclicBarrier(callers);
        var futures = new ArrayList<Future<Boolean>>();
        try (var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < callers; i++) {
                futures.add(executor.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    try (var claim = locks.claimNames(TENANT, List.of("web"), (t, n) -> catalog.contains(n) ? Optional.of(n) : Optional.empty())) {
                        Thread.sleep(5); // the create's work, between the check and the insert
                        return catalog.add("web");
                    } catch (StasisException e) {
                        assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                        return false;
                    }
                }));
            }
            int winners = 0;
            for (var f : futures) if (f.get(30, TimeUnit.SECONDS)) winners++;
            assertThat(winners).isOne();
        }
        assertThat(locks.keysInUse()).isZero();
    }

    @Test
    void aNameTheCatalogHasIsTakenAndAFailedClaimHoldsNoneOfItsNames() {
        var locks = new SandboxLocks();
        assertThatThrownBy(() -> locks.claimNames(TENANT, List.of("a", "b", "c"), (t, n) -> n.equals("b") ? Optional.of(n) : Optional.empty()))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
        assertThat(locks.keysInUse()).isZero();
        try (var claim = locks.claimNames(TENANT, List.of("a", "c"), (t, n) -> Optional.empty())) {
            assertThat(locks.keysInUse()).isEqualTo(2);
        }
        assertThat(locks.keysInUse()).isZero();
    }

    @Test
    void namesAreClaimedPerTenant() throws Exception {
        var locks = new SandboxLocks();
        try (var mine = locks.claimNames(TENANT, List.of("web"), (t, n) -> Optional.empty());
             var executor = Executors.newVirtualThreadPerTaskExecutor()) {
            var other = executor.submit(() -> {
                try (var theirs = locks.claimNames(TenantId.random(), List.of("web"), (t, n) -> Optional.empty())) {
                    return true;
                }
            });
            assertThat(other.get(10, TimeUnit.SECONDS)).isTrue();
        }
    }
}
