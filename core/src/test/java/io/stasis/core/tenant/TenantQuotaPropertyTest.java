package io.stasis.core.tenant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.ratelimit.Rate;
import io.stasis.core.sandbox.RuntimeKind;
import java.util.Optional;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * {@link TenantQuota#with}: a partial update. Each field of the change that is present replaces
 * the base's; an absent one keeps it. So an absent field can never lift a limit (use a present one).
 */
class TenantQuotaPropertyTest {

    @Property
    void presentFieldsOfTheChangeWinAndAbsentOnesKeepTheBase(@ForAll("quotas") TenantQuota base, @ForAll("quotas") TenantQuota change) {
        var merged = base.with(change);

        assertThat(merged.runningSandboxes()).isEqualTo(change.runningSandboxes().or(base::runningSandboxes));
        assertThat(merged.memoryMb()).isEqualTo(change.memoryMb().isPresent() ? change.memoryMb() : base.memoryMb());
        assertThat(merged.diskMb()).isEqualTo(change.diskMb().isPresent() ? change.diskMb() : base.diskMb());
        assertThat(merged.runtimes()).isEqualTo(change.runtimes().isPresent() ? change.runtimes() : base.runtimes());
        assertThat(merged.requestsPerSecond()).isEqualTo(change.requestsPerSecond().or(base::requestsPerSecond));
        assertThat(merged.requestBurst()).isEqualTo(change.requestBurst().or(base::requestBurst));
        assertThat(merged.createsPerMinute()).isEqualTo(change.createsPerMinute().or(base::createsPerMinute));
    }

    @Property
    void aCreateNamingNoRuntimeGetsTheServicesDefaultIfAllowedElseOneTheTenantMayUse(@ForAll("quotas") TenantQuota quota,
                                                                                     @ForAll RuntimeKind serviceDefault) {
        var chosen = quota.runtimeFor(serviceDefault);
        assertThat(quota.allows(chosen)).isTrue();
        if (quota.allows(serviceDefault)) assertThat(chosen).isEqualTo(serviceDefault);
        for (var runtime : RuntimeKind.values()) {
            if (quota.allows(runtime)) quota.requireRuntime(TenantId.DEFAULT, runtime, "create");
            else assertThatThrownBy(() -> quota.requireRuntime(TenantId.DEFAULT, runtime, "create"))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FORBIDDEN));
        }
    }

    @Property
    void anEmptyChangeIsTheIdentityAndAFullOneReplacesEverything(@ForAll("quotas") TenantQuota base, @ForAll("fullQuotas") TenantQuota full) {
        assertThat(base.with(TenantQuota.UNLIMITED)).isEqualTo(base);
        assertThat(base.with(full)).isEqualTo(full);
        assertThat(TenantQuota.UNLIMITED.with(base)).isEqualTo(base);
    }

    @Property
    void applyingTheSameChangeTwiceChangesNothingMore(@ForAll("quotas") TenantQuota base, @ForAll("quotas") TenantQuota change) {
        assertThat(base.with(change).with(change)).isEqualTo(base.with(change));
    }

    @Property
    void successiveChangesComposeAsOne(@ForAll("quotas") TenantQuota base, @ForAll("quotas") TenantQuota first,
                                       @ForAll("quotas") TenantQuota second) {
        assertThat(base.with(first).with(second)).isEqualTo(base.with(first.with(second)));
    }

    @Test
    void negativeLimitsAreInvalidAndZeroIsAllowed() {
        invalid(() -> new TenantQuota(Optional.of(-1), Optional.empty(), Optional.empty()), "quota.runningSandboxes");
        invalid(() -> new TenantQuota(Optional.empty(), Optional.of(-1L), Optional.empty()), "quota.memoryMb");
        invalid(() -> new TenantQuota(Optional.empty(), Optional.empty(), Optional.of(Long.MIN_VALUE)), "quota.diskMb");
        var zero = new TenantQuota(Optional.of(0), Optional.of(0L), Optional.of(0L));
        assertThat(TenantQuota.UNLIMITED.with(zero)).isEqualTo(zero);
        invalid(() -> new TenantQuota(Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(Set.of())), "quota.runtimes");
        invalid(() -> rates(Optional.of(0), Optional.empty(), Optional.empty()), "quota.requestsPerSecond");
        invalid(() -> rates(Optional.empty(), Optional.of(TenantQuota.MAX_RATE + 1), Optional.empty()), "quota.requestBurst");
        invalid(() -> rates(Optional.empty(), Optional.empty(), Optional.of(-5)), "quota.createsPerMinute");
    }

    @Test
    void aTenantsOwnRatesWinOverTheOperatorsAndItsBurstAppliesToEither() {
        var operator = Optional.of(new Rate(100, 150));
        assertThat(TenantQuota.UNLIMITED.requestRate(Optional.empty())).isEmpty();
        assertThat(TenantQuota.UNLIMITED.requestRate(operator)).isEqualTo(operator);
        assertThat(rates(Optional.of(5), Optional.empty(), Optional.empty()).requestRate(operator)).contains(new Rate(5, 10));
        assertThat(rates(Optional.of(5), Optional.of(7), Optional.empty()).requestRate(Optional.empty())).contains(new Rate(5, 7));
        assertThat(rates(Optional.empty(), Optional.of(7), Optional.empty()).requestRate(operator)).contains(new Rate(100, 7));
        assertThat(rates(Optional.empty(), Optional.of(7), Optional.empty()).requestRate(Optional.empty())).as("a burst alone limits nothing").isEmpty();
        assertThat(rates(Optional.empty(), Optional.empty(), Optional.of(6)).createRate(Optional.of(Rate.perMinute(60)))).contains(Rate.perMinute(6));
        assertThat(TenantQuota.UNLIMITED.createRate(Optional.of(Rate.perMinute(60)))).contains(Rate.perMinute(60));
    }

    private static TenantQuota rates(Optional<Integer> perSecond, Optional<Integer> burst, Optional<Integer> createsPerMinute) {
        return new TenantQuota(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), perSecond, burst, createsPerMinute);
    }

    private static void invalid(Runnable action, String field) {
        assertThatThrownBy(action::run).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
            assertThat(e.details()).containsEntry("field", field);
        });
    }

    @Provide
    Arbitrary<TenantQuota> quotas() {
        return Combinators.combine(Arbitraries.integers().between(0, Integer.MAX_VALUE).optional(0.5),
                Arbitraries.longs().between(0, Long.MAX_VALUE).optional(0.5),
                Arbitraries.longs().between(0, Long.MAX_VALUE).optional(0.5),
                Arbitraries.of(RuntimeKind.class).set().ofMinSize(1).optional(0.5), rate().optional(0.5), rate().optional(0.5),
                rate().optional(0.5)).as(TenantQuota::new);
    }

    private static Arbitrary<Integer> rate() {
        return Arbitraries.integers().between(1, TenantQuota.MAX_RATE);
    }

    @Provide
    Arbitrary<TenantQuota> fullQuotas() {
        return Combinators.combine(Arbitraries.integers().between(0, Integer.MAX_VALUE),
                Arbitraries.longs().between(0, Long.MAX_VALUE), Arbitraries.longs().between(0, Long.MAX_VALUE))
                .as((n, memory, disk) -> new TenantQuota(Optional.of(n), Optional.of(memory), Optional.of(disk), Optional.of(Set.of(RuntimeKind.GVISOR)),
                        Optional.of(n % 1000 + 1), Optional.of(n % 500 + 1), Optional.of(n % 60 + 1)));
    }
}
