package io.stasis.server.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.auth.Caller;
import io.stasis.core.auth.Credentials;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.ratelimit.Rate;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantService;
import io.stasis.server.RateLimitSettings;
import io.stasis.testkit.MutableClock;
import io.stasis.testkit.fake.InMemoryCatalog;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RequestRatesTest {
    private final MutableClock clock = new MutableClock();
    private final InMemoryCatalog catalog = new InMemoryCatalog(clock);
    private final Credentials credentials = new Credentials(catalog, clock);
    private final TenantService tenants = new TenantService(catalog, catalog, credentials, clock);
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    private RequestRates rates(RateLimitSettings settings) {
        return new RequestRates(settings, tenants, nanos::get);
    }

    private Caller keyOf(String tenant, TenantQuota quota) {
        var t = tenants.create(tenant, quota);
        return new Caller.Key(credentials.issueKey(t.id()).key());
    }

    private static StasisException refused(Runnable call) {
        var thrown = new StasisException[1];
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StasisException.class, e -> thrown[0] = e);
        assertThat(thrown[0].code()).isEqualTo(ErrorCode.RATE_LIMITED);
        return thrown[0];
    }

    @Test
    void aTenantsOwnRateRefusesPastItsBurstAndNamesTheWait() {
        var rates = rates(RateLimitSettings.NONE);
        var caller = keyOf("acme", new TenantQuota(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.of(4), Optional.of(2), Optional.empty()));
        rates.admit(caller, "GET", "/v1/sandboxes");
        rates.admit(caller, "GET", "/v1/sandboxes");
        var e = refused(() -> rates.admit(caller, "GET", "/v1/sandboxes"));
        assertThat(e.details()).containsEntry("retryAfterMs", 250L).containsEntry("limits", List.of("tenant"));
        assertThat(e.getMessage()).contains("the calls of tenant ten_").contains("4 a second, bursts of 2");
        nanos.addAndGet(Duration.ofMillis(250).toNanos());
        rates.admit(caller, "GET", "/v1/sandboxes");
    }

    @Test
    void theRootKeyIsNeverLimitedAndEachCredentialHasItsOwnBucket() {
        var rates = rates(new RateLimitSettings(Optional.empty(), Optional.of(new Rate(1, 1)), Optional.empty()));
        var root = new Caller.Key(credentials.issueRoot().key());
        for (int i = 0; i < 100; i++) rates.admit(root, "POST", "/v1/sandboxes");
        var tenant = tenants.create("two-keys", TenantQuota.UNLIMITED);
        var first = new Caller.Key(credentials.issueKey(tenant.id()).key());
        var second = new Caller.Key(credentials.issueKey(tenant.id()).key());
        rates.admit(first, "GET", "/v1/sandboxes");
        assertThat(refused(() -> rates.admit(first, "GET", "/v1/sandboxes")).details()).containsEntry("limits", List.of("credential"));
        rates.admit(second, "GET", "/v1/sandboxes");
    }

    @Test
    void createsAndForksCountAgainstTheCreateRateOtherCallsDoNot() {
        var rates = rates(new RateLimitSettings(Optional.empty(), Optional.empty(), Optional.of(Rate.perMinute(2))));
        var caller = keyOf("builder", TenantQuota.UNLIMITED);
        rates.admit(caller, "POST", "/v1/sandboxes");
        rates.admit(caller, "POST", "/v1/sandboxes/web/fork");
        assertThat(refused(() -> rates.admit(caller, "POST", "/v1/sandboxes/")).details()).containsEntry("limits", List.of("creates"))
                .containsEntry("retryAfterMs", 30_000L);
        for (int i = 0; i < 20; i++) {
            rates.admit(caller, "GET", "/v1/sandboxes");
            rates.admit(caller, "POST", "/v1/sandboxes/web/exec");
            rates.admit(caller, "POST", "/v1/sandboxes/fork/pause");
        }
    }

    @Test
    void aChangedQuotaAppliesOnceTheCachedOneIsASecondOld() {
        var rates = rates(new RateLimitSettings(Optional.empty(), Optional.empty(), Optional.of(Rate.perMinute(1))));
        var caller = keyOf("grows", TenantQuota.UNLIMITED);
        rates.admit(caller, "POST", "/v1/sandboxes");
        refused(() -> rates.admit(caller, "POST", "/v1/sandboxes"));
        tenants.updateQuota(caller.tenant().value(), new TenantQuota(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.of(600)));
        refused(() -> rates.admit(caller, "POST", "/v1/sandboxes"));
        nanos.addAndGet(RequestRates.QUOTA_TTL.toNanos());
        rates.admit(caller, "POST", "/v1/sandboxes");
    }

    @Test
    void onlyCreateAndForkPathsAreCreates() {
        assertThat(RequestRates.isCreate("POST", "/v1/sandboxes")).isTrue();
        assertThat(RequestRates.isCreate("POST", "/v1/sandboxes/sbx_1/fork")).isTrue();
        assertThat(RequestRates.isCreate("POST", "/v1/sandboxes/sbx_1/fork/")).isTrue();
        assertThat(RequestRates.isCreate("GET", "/v1/sandboxes")).isFalse();
        assertThat(RequestRates.isCreate("POST", "/v1/sandboxes/sbx_1/files/fork")).isFalse();
        assertThat(RequestRates.isCreate("POST", "/v1/sandboxes/fork")).isFalse();
        assertThat(RequestRates.isCreate("POST", "/v1/volumes")).isFalse();
    }
}
