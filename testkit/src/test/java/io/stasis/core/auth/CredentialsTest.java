package io.stasis.core.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.tenant.TenantId;
import io.stasis.testkit.MutableClock;
import io.stasis.testkit.fake.InMemoryCatalog;
import org.junit.jupiter.api.Test;

/** A root key an operator kept (a deployment's secret) becomes the root key as it is; a malformed one is refused. */
class CredentialsTest {
    private final MutableClock clock = new MutableClock();
    private final InMemoryCatalog catalog = new InMemoryCatalog(clock);
    private final Credentials credentials = new Credentials(catalog, clock);

    @Test
    void anAdoptedRootKeyAuthenticatesAsTheRootAndIsStoredOnlyAsItsHash() {
        String secret = Credentials.KEY_PREFIX + "A".repeat(43);
        var key = credentials.adoptRoot(secret);
        assertThat(key.root()).isTrue();
        assertThat(key.tenant()).isEqualTo(TenantId.DEFAULT);
        assertThat(key.secretHash()).isNotEqualTo(secret).hasSize(64);
        assertThat(catalog.hasRootKey()).isTrue();
        assertThat(credentials.authenticate(secret)).hasValueSatisfying(caller -> assertThat(caller.isRoot()).isTrue());
    }

    @Test
    void aSecretThatIsNotAKeyIsRefused() {
        for (String bad : new String[] {"", "sk_short", "pk_" + "A".repeat(43), Credentials.KEY_PREFIX + "A".repeat(40) + " !"}) {
            assertThatThrownBy(() -> credentials.adoptRoot(bad))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST));
        }
        assertThat(catalog.hasRootKey()).isFalse();
    }

    @Test
    void aKeyInE2bsFormAuthenticatesAsItsTenantLikeAnyKey() {
        var tenant = TenantId.random();
        var issued = credentials.issueKey(tenant, Credentials.KeyFormat.E2B);
        assertThat(issued.secret()).matches("e2b_[0-9a-f]{40}");
        assertThat(credentials.authenticate(issued.secret())).hasValueSatisfying(caller -> {
            assertThat(caller.tenant()).isEqualTo(tenant);
            assertThat(caller.isRoot()).isFalse();
        });
        assertThat(credentials.authenticate("e2b_" + "0".repeat(40))).isEmpty();
        assertThat(credentials.issueKey(tenant).secret()).startsWith(Credentials.KEY_PREFIX);
    }
}
