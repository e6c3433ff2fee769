package io.stasis.testkit;

import static io.stasis.testkit.CatalogFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.Permission;
import io.stasis.core.auth.ScopedToken;
import io.stasis.core.auth.TokenScope;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.secret.SealedSecret;
import io.stasis.core.spi.Catalog;
import io.stasis.core.tenant.QuotaHold;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantUsage;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What every {@link Catalog} must do with tenants and what they own, as the SQLite catalog does it:
 * tenants and their quotas, usage, API keys, scoped tokens and secrets, and what a tenant's
 * deletion takes (that a volume also keeps a tenant is in {@link VolumeCatalogSuite}). A
 * backend's test extends this and supplies a fresh, empty catalog per test (only the default
 * tenant in it).
 */
public abstract class TenantCatalogSuite extends CatalogSuiteBase<Catalog> {

    // --- API keys ---

    @Test
    void apiKeysAreFoundByHashAndTheRootFlagIsKept() {
        assertThat(catalog().hasRootKey()).isFalse();
        var plain = new ApiKey("key_aaaaaaaaaaaaaaaa", TenantId.DEFAULT, "11".repeat(32), false, T0);
        catalog().insertApiKey(plain);
        assertThat(catalog().hasRootKey()).isFalse();

        var root = new ApiKey("key_bbbbbbbbbbbbbbbb", TenantId.DEFAULT, "22".repeat(32), true, T0.plusSeconds(1));
        catalog().insertApiKey(root);

        assertThat(catalog().hasRootKey()).isTrue();
        assertThat(catalog().findApiKeyByHash(plain.secretHash())).contains(plain);
        assertThat(catalog().findApiKeyByHash(root.secretHash())).contains(root);
        assertThat(catalog().findApiKeyByHash("33".repeat(32))).isEmpty();
        catalog().deleteApiKey(root.id());
        assertThat(catalog().hasRootKey()).isFalse();
    }

    @Test
    void aDuplicateKeyIdOrSecretHashIsInternalAndStoresNothing() {
        catalog().insertApiKey(new ApiKey("key_aaaaaaaaaaaaaaaa", TenantId.DEFAULT, "11".repeat(32), false, T0));
        assertThatThrownBy(() -> catalog().insertApiKey(new ApiKey("key_cccccccccccccccc", TenantId.DEFAULT, "11".repeat(32), true, T0)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThatThrownBy(() -> catalog().insertApiKey(new ApiKey("key_aaaaaaaaaaaaaaaa", TenantId.DEFAULT, "44".repeat(32), true, T0)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog().hasRootKey()).isFalse();
        assertThat(catalog().apiKeysOf(TenantId.DEFAULT)).hasSize(1);
    }

    @Test
    void eachTenantListsItsOwnKeysOldestFirst() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var aLate = CatalogFixtures.key(a, T0.plusSeconds(2));
        var aEarly = CatalogFixtures.key(a, T0);
        var bOnly = CatalogFixtures.key(b, T0.plusSeconds(1));
        List.of(aLate, bOnly, aEarly).forEach(catalog()::insertApiKey);

        assertThat(catalog().apiKeysOf(a)).containsExactly(aEarly, aLate);
        assertThat(catalog().apiKeysOf(b)).containsExactly(bOnly);
        assertThat(catalog().apiKeysOf(TenantId.DEFAULT)).isEmpty();
        assertThat(catalog().findApiKeyByHash(bOnly.secretHash())).contains(bOnly);
        assertThat(catalog().hasRootKey()).isFalse();
    }

    @Test
    void deleteApiKeyForgetsOneKeyIdempotently() {
        var a = insertTenant("a").id();
        var gone = CatalogFixtures.key(a, T0);
        var kept = CatalogFixtures.key(a, T0.plusSeconds(1));
        catalog().insertApiKey(gone);
        catalog().insertApiKey(kept);

        catalog().deleteApiKey(gone.id());
        catalog().deleteApiKey(gone.id());
        catalog().deleteApiKey("key_" + Ids.randomSuffix());

        assertThat(catalog().findApiKeyByHash(gone.secretHash())).isEmpty();
        assertThat(catalog().apiKeysOf(a)).containsExactly(kept);
    }

    // --- tenants ---

    @Test
    void theDefaultTenantExistsFromTheStartUnlimited() {
        var found = catalog().findTenant(TenantId.DEFAULT).orElseThrow();
        assertThat(found.name()).isEqualTo("default");
        assertThat(found.quota()).isEqualTo(TenantQuota.UNLIMITED);
        assertThat(found.createdAt()).isBefore(LATER);
        assertThat(catalog().allTenants()).containsExactly(found);
    }

    @Test
    void tenantsAreFoundAndListedOldestFirst() {
        var defaultTenant = catalog().findTenant(TenantId.DEFAULT).orElseThrow();
        var limited = new Tenant(TenantId.random(), "acme", new TenantQuota(Optional.of(0), Optional.of(Long.MAX_VALUE), Optional.of(1L)),
                LATER.plusSeconds(2));
        var unlimited = CatalogFixtures.tenant("globex-2", LATER.plusNanos(1));
        var tieA = new Tenant(new TenantId("ten_aaaaaaaaaaaaaaaa"), "tie-a", TenantQuota.UNLIMITED, LATER.plusSeconds(1));
        var tieB = new Tenant(new TenantId("ten_bbbbbbbbbbbbbbbb"), "tie-b", TenantQuota.UNLIMITED, LATER.plusSeconds(1));
        List.of(limited, tieB, unlimited, tieA).forEach(catalog()::insertTenant);

        assertThat(catalog().findTenant(limited.id())).contains(limited);
        assertThat(catalog().findTenant(unlimited.id())).contains(unlimited);
        assertThat(catalog().findTenant(TenantId.random())).isEmpty();
        assertThat(catalog().allTenants()).containsExactly(defaultTenant, unlimited, tieA, tieB, limited);
    }

    @Test
    void updateTenantReplacesTheQuotaOnly() {
        var t = new Tenant(TenantId.random(), "acme", new TenantQuota(Optional.of(3), Optional.empty(), Optional.of(100L)), LATER);
        catalog().insertTenant(t);

        var changed = t.withQuota(new TenantQuota(Optional.empty(), Optional.of(4096L), Optional.empty()));
        catalog().updateTenant(changed);
        assertThat(catalog().findTenant(t.id())).contains(changed);
        var heldToGvisor = t.withQuota(new TenantQuota(Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(Set.of(RuntimeKind.GVISOR))));
        catalog().updateTenant(heldToGvisor);
        assertThat(catalog().findTenant(t.id())).contains(heldToGvisor);
        var either = t.withQuota(new TenantQuota(Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.of(Set.of(RuntimeKind.RUNC, RuntimeKind.GVISOR))));
        catalog().updateTenant(either);
        assertThat(catalog().findTenant(t.id()).orElseThrow().quota().runtimes()).contains(Set.of(RuntimeKind.GVISOR, RuntimeKind.RUNC));
        var rated = t.withQuota(new TenantQuota(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.of(20), Optional.of(50), Optional.of(6)));
        catalog().updateTenant(rated);
        assertThat(catalog().findTenant(t.id())).contains(rated);

        catalog().updateTenant(new Tenant(t.id(), "renamed", TenantQuota.UNLIMITED, LATER.plusSeconds(5)));
        assertThat(catalog().findTenant(t.id())).contains(t.withQuota(TenantQuota.UNLIMITED));
    }

    @Test
    void updatingAnUnknownTenantIsInternal() {
        var ghost = CatalogFixtures.tenant("ghost", LATER);
        assertThatThrownBy(() -> catalog().updateTenant(ghost))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog().findTenant(ghost.id())).isEmpty();
    }

    @Test
    void aDuplicateTenantNameIsNameTakenAndADuplicateIdInternal() {
        var first = insertTenant("acme");

        for (String taken : List.of("acme", "default")) {
            var clash = CatalogFixtures.tenant(taken, LATER.plusSeconds(1));
            assertThatThrownBy(() -> catalog().insertTenant(clash)).as(taken)
                    .isInstanceOfSatisfying(StasisException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                        assertThat(e.details()).containsEntry("name", taken);
                    });
            assertThat(catalog().findTenant(clash.id())).isEmpty();
        }
        assertThatThrownBy(() -> catalog().insertTenant(new Tenant(first.id(), "other", TenantQuota.UNLIMITED, LATER)))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        assertThat(catalog().allTenants()).extracting(Tenant::id).containsExactly(TenantId.DEFAULT, first.id());
        assertThat(catalog().findTenant(first.id())).contains(first);
    }

    @Test
    void deletingATenantIsRefusedWhileItHasASandboxAndThenRemovesItsKeysTokensAndSecretsOnly() {
        var doomed = insertTenant("doomed").id();
        var kept = insertTenant("kept").id();
        var sandbox = CatalogFixtures.ofTenant(doomed, SandboxState.RUNNING, 1024, 100, T0);
        var keptSandbox = CatalogFixtures.ofTenant(kept, SandboxState.RUNNING, 1024, 100, T0);
        catalog().insert(sandbox);
        catalog().insert(keptSandbox);
        var doomedKey = CatalogFixtures.key(doomed, T0);
        var keptKey = CatalogFixtures.key(kept, T0);
        var rootKey = new ApiKey("key_" + Ids.randomSuffix(), TenantId.DEFAULT, "ff".repeat(32), true, T0);
        List.of(doomedKey, keptKey, rootKey).forEach(catalog()::insertApiKey);
        var doomedToken = CatalogFixtures.token(doomed, new TokenScope.Volume("vol_1"), T0, T0.plusSeconds(60));
        var keptToken = CatalogFixtures.sandboxToken(kept, keptSandbox.id());
        catalog().insertToken(doomedToken);
        catalog().insertToken(keptToken);
        var secret = new SealedSecret("TOKEN", T0, new byte[]{1});
        catalog().putSecret(doomed, secret);
        catalog().putSecret(kept, secret);
        catalog().putSecret(TenantId.DEFAULT, secret);

        assertThat(catalog().deleteTenantIfEmpty(doomed)).isFalse();
        assertThat(catalog().findTenant(doomed)).isPresent();
        assertThat(catalog().apiKeysOf(doomed)).containsExactly(doomedKey);
        assertThat(catalog().tokensOf(doomed)).containsExactly(doomedToken);
        assertThat(catalog().secretsOf(doomed)).containsExactly(secret);

        catalog().delete(sandbox.id());
        assertThat(catalog().deleteTenantIfEmpty(doomed)).isTrue();

        assertThat(catalog().findTenant(doomed)).isEmpty();
        assertThat(catalog().apiKeysOf(doomed)).isEmpty();
        assertThat(catalog().findApiKeyByHash(doomedKey.secretHash())).isEmpty();
        assertThat(catalog().tokensOf(doomed)).isEmpty();
        assertThat(catalog().findToken(doomedToken.id())).isEmpty();
        assertThat(catalog().secretsOf(doomed)).isEmpty();

        assertThat(catalog().findTenant(kept)).isPresent();
        assertThat(catalog().find(keptSandbox.id())).contains(keptSandbox);
        assertThat(catalog().apiKeysOf(kept)).containsExactly(keptKey);
        assertThat(catalog().apiKeysOf(TenantId.DEFAULT)).containsExactly(rootKey);
        assertThat(catalog().hasRootKey()).isTrue();
        assertThat(catalog().tokensOf(kept)).containsExactly(keptToken);
        assertThat(catalog().findSecret(kept, "TOKEN")).contains(secret);
        assertThat(catalog().findSecret(TenantId.DEFAULT, "TOKEN")).contains(secret);
    }

    @Test
    void aSandboxBeingDeletedStillKeepsItsTenant() {
        var t = insertTenant("t").id();
        catalog().insert(CatalogFixtures.ofTenant(t, SandboxState.DELETED, 1024, 100, T0));

        assertThat(catalog().deleteTenantIfEmpty(t)).isFalse();
        assertThat(catalog().findTenant(t)).isPresent();
    }

    @Test
    void anEmptyTenantGoesAtOnceAndTheDefaultNever() {
        var t = insertTenant("empty").id();
        assertThat(catalog().deleteTenantIfEmpty(t)).isTrue();
        assertThat(catalog().findTenant(t)).isEmpty();
        assertThat(catalog().deleteTenantIfEmpty(TenantId.DEFAULT)).isFalse();
        assertThat(catalog().allTenants()).extracting(Tenant::id).containsExactly(TenantId.DEFAULT);
        // Nothing holds an unknown tenant, so deleting it succeeds: there is nothing left of it.
        assertThat(catalog().deleteTenantIfEmpty(TenantId.random())).isTrue();
    }

    @Test
    void usageCountsRunningPausedAndStandbySandboxesAndTheirMemoryAndEverySandboxsDiskPerTenant() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        catalog().insert(CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 1024, 100, T0));
        catalog().insert(CatalogFixtures.ofTenant(a, SandboxState.PAUSED, 512, 100, T0));
        catalog().insert(CatalogFixtures.ofTenant(a, SandboxState.STANDBY, 256, 100, T0));
        catalog().insert(CatalogFixtures.ofTenant(a, new SandboxState.Hibernated(CheckpointId.random(), 1, T0), 4096, 100, T0));
        catalog().insert(CatalogFixtures.ofTenant(a, new SandboxState.Stopped("idle"), 8192, 100, T0));
        catalog().insert(CatalogFixtures.ofTenant(a, SandboxState.DELETED, 16384, 100, T0));
        catalog().insert(CatalogFixtures.ofTenant(b, SandboxState.RUNNING, 256, 70, T0));

        assertThat(catalog().usage(a)).isEqualTo(new TenantUsage(3, 1792, 5 * 100));
        assertThat(catalog().usage(b)).isEqualTo(new TenantUsage(1, 256, 70));
        assertThat(catalog().usage(TenantId.DEFAULT)).isEqualTo(TenantUsage.NONE);
        assertThat(catalog().usage(TenantId.random())).isEqualTo(TenantUsage.NONE);
    }

    @Test
    void aHoldIsAdmittedOnTheTenantsAndTheNodesFiguresAndCountsUntilReleased() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        catalog().insert(CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 1024, 100, T0));
        catalog().insert(CatalogFixtures.ofTenant(b, SandboxState.RUNNING, 256, 70, T0));
        catalog().insert(CatalogFixtures.ofTenant(b, new SandboxState.Stopped("user"), 4096, 64, T0));
        var seen = new ArrayList<List<TenantUsage>>();
        catalog().hold(new QuotaHold("qh_a1", a, new TenantUsage(1, 512, 200)), (tenant, node) -> seen.add(List.of(tenant, node)));
        catalog().hold(new QuotaHold("qh_a2", a, new TenantUsage(0, 0, 5)), (tenant, node) -> seen.add(List.of(tenant, node)));
        assertThat(seen).containsExactly(
                List.of(new TenantUsage(1, 1024, 100), new TenantUsage(2, 1280, 234)),
                // the first hold counts in its tenant's figures and in the node's
                List.of(new TenantUsage(2, 1536, 300), new TenantUsage(3, 1792, 434)));
        assertThat(catalog().usage(a)).as("usage is what is recorded; holds are apart").isEqualTo(new TenantUsage(1, 1024, 100));
        assertThat(catalog().nodeLoads()).containsExactlyEntriesOf(java.util.Map.of(catalog().localNode(), new TenantUsage(3, 1792, 439)));

        // A refused hold records nothing.
        assertThatThrownBy(() -> catalog().hold(new QuotaHold("qh_a3", a, new TenantUsage(1, 1, 1)), (tenant, node) -> {
            throw StasisException.invalid("quota", "refused");
        })).isInstanceOf(StasisException.class);
        catalog().releaseHold("qh_a1");
        catalog().releaseHold("qh_a1"); // gone already: nothing
        assertThat(catalog().nodeLoads()).containsExactlyEntriesOf(java.util.Map.of(catalog().localNode(), new TenantUsage(2, 1280, 239)));
        catalog().hold(new QuotaHold("qh_b1", b, new TenantUsage(1, 64, 0)), (tenant, node) -> assertThat(tenant).isEqualTo(new TenantUsage(1, 256, 134)));
        assertThat(catalog().releaseHoldsOf("some-other-node")).isZero();
        assertThat(catalog().releaseHoldsOf(catalog().localNode())).isEqualTo(2);
        assertThat(catalog().nodeLoads()).containsExactlyEntriesOf(java.util.Map.of(catalog().localNode(), new TenantUsage(2, 1280, 234)));
    }

    @Test
    void usageFollowsStateChanges() {
        var a = insertTenant("a").id();
        var s = CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 2048, 100, T0);
        catalog().insert(s);
        assertThat(catalog().usage(a)).isEqualTo(new TenantUsage(1, 2048, 100));

        catalog().update(s.withState(new SandboxState.Hibernated(CheckpointId.random(), 1, T0)));
        assertThat(catalog().usage(a)).as("a hibernated sandbox keeps its disk").isEqualTo(new TenantUsage(0, 0, 100));
        catalog().update(s.withState(SandboxState.RUNNING));
        assertThat(catalog().usage(a)).isEqualTo(new TenantUsage(1, 2048, 100));
        catalog().update(s.withState(SandboxState.DELETED));
        assertThat(catalog().usage(a)).as("being deleted: holds nothing").isEqualTo(TenantUsage.NONE);
        catalog().delete(s.id());
        assertThat(catalog().usage(a)).isEqualTo(TenantUsage.NONE);
    }

    // --- scoped tokens ---

    @Test
    void tokensRoundTripByHashIdAndTenant() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var sandbox = CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 1024, 100, T0);
        catalog().insert(sandbox);
        var full = new ScopedToken("tok_" + Ids.randomSuffix(), a, "aa".repeat(32), Optional.of("ci agent ✓"),
                new TokenScope.Sandbox(sandbox.id()), Set.of(Permission.EXEC, Permission.FILES_READ, Permission.FILES_WRITE),
                Instant.parse("2026-03-01T12:00:00.000000001Z"), Instant.parse("2026-03-01T13:00:00.000000001Z"));
        var volume = new ScopedToken("tok_" + Ids.randomSuffix(), a, "bb".repeat(32), Optional.empty(),
                new TokenScope.Volume("vol_data"), Set.of(Permission.VOLUME_READ, Permission.VOLUME_WRITE), T0.minusSeconds(1), T0);
        var ofB = CatalogFixtures.sandboxToken(b, SandboxId.random());
        List.of(full, volume, ofB).forEach(catalog()::insertToken);

        assertThat(catalog().findTokenByHash(full.secretHash())).contains(full);
        assertThat(catalog().findTokenByHash(volume.secretHash())).contains(volume);
        assertThat(catalog().findTokenByHash("cc".repeat(32))).isEmpty();
        assertThat(catalog().findToken(full.id())).contains(full);
        assertThat(catalog().findToken("tok_" + Ids.randomSuffix())).isEmpty();
        assertThat(catalog().tokensOf(a)).containsExactly(volume, full);
        assertThat(catalog().tokensOf(b)).containsExactly(ofB);
        assertThat(catalog().tokensOf(TenantId.DEFAULT)).isEmpty();
    }

    @Test
    void aDuplicateTokenIdOrSecretHashIsInternal() {
        var token = CatalogFixtures.sandboxToken(TenantId.DEFAULT, SandboxId.random());
        catalog().insertToken(token);
        var sameHash = new ScopedToken("tok_" + Ids.randomSuffix(), TenantId.DEFAULT, token.secretHash(), Optional.empty(), token.scope(),
                token.permissions(), T0, T0.plusSeconds(1));
        var sameId = new ScopedToken(token.id(), TenantId.DEFAULT, "dd".repeat(32), Optional.empty(), token.scope(),
                token.permissions(), T0, T0.plusSeconds(1));
        for (var clash : List.of(sameHash, sameId)) {
            assertThatThrownBy(() -> catalog().insertToken(clash))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INTERNAL));
        }
        assertThat(catalog().tokensOf(TenantId.DEFAULT)).containsExactly(token);
    }

    @Test
    void deleteTokenForgetsOneTokenIdempotently() {
        var a = insertTenant("a").id();
        var gone = CatalogFixtures.sandboxToken(a, SandboxId.random());
        var kept = CatalogFixtures.sandboxToken(a, SandboxId.random());
        catalog().insertToken(gone);
        catalog().insertToken(kept);

        catalog().deleteToken(gone.id());
        catalog().deleteToken(gone.id());

        assertThat(catalog().findToken(gone.id())).isEmpty();
        assertThat(catalog().findTokenByHash(gone.secretHash())).isEmpty();
        assertThat(catalog().tokensOf(a)).hasSize(1).first().isEqualTo(kept);
    }

    @Test
    void deleteTokensExpiredBeforeKeepsThoseExpiringAtOrAfterThatInstant() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var scope = new TokenScope.Sandbox(SandboxId.random());
        var expired = CatalogFixtures.token(a, scope, T0.minusSeconds(10), T0.minusNanos(1));
        var expiredOfB = CatalogFixtures.token(b, scope, T0.minusSeconds(10), T0.minusSeconds(5));
        var expiringNow = CatalogFixtures.token(a, scope, T0.minusSeconds(9), T0);
        var live = CatalogFixtures.token(a, scope, T0.minusSeconds(8), T0.plusSeconds(60));
        List.of(expired, expiredOfB, expiringNow, live).forEach(catalog()::insertToken);

        catalog().deleteTokensExpiredBefore(T0);

        assertThat(catalog().tokensOf(a)).containsExactly(expiringNow, live);
        assertThat(catalog().tokensOf(b)).isEmpty();
        assertThat(catalog().findTokenByHash(expired.secretHash())).isEmpty();
    }

    @Test
    void deletingASandboxRevokesTheTokensScopedToIt() {
        var a = insertTenant("a").id();
        var gone = CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 1024, 100, T0);
        var kept = CatalogFixtures.ofTenant(a, SandboxState.RUNNING, 1024, 100, T0);
        catalog().insert(gone);
        catalog().insert(kept);
        var ofGone = CatalogFixtures.sandboxToken(a, gone.id());
        var alsoOfGone = CatalogFixtures.sandboxToken(a, gone.id());
        var ofKept = CatalogFixtures.sandboxToken(a, kept.id());
        // A volume that happens to carry the same id is another resource.
        var volume = CatalogFixtures.token(a, new TokenScope.Volume(gone.id().value()), T0, T0.plusSeconds(60));
        List.of(ofGone, alsoOfGone, ofKept, volume).forEach(catalog()::insertToken);

        catalog().delete(gone.id());

        assertThat(catalog().findToken(ofGone.id())).isEmpty();
        assertThat(catalog().findTokenByHash(alsoOfGone.secretHash())).isEmpty();
        assertThat(catalog().tokensOf(a)).containsExactlyInAnyOrder(ofKept, volume);
    }

    // --- secrets ---

    @Test
    void putSecretSaysWhetherItIsNewReplacesListsByNameAndDeletes() {
        byte[] sealed = "opaque-bytes".getBytes(StandardCharsets.UTF_8);
        assertThat(catalog().putSecret(TenantId.DEFAULT, new SealedSecret("B_TOKEN", T0, sealed))).isTrue();
        assertThat(catalog().putSecret(TenantId.DEFAULT, new SealedSecret("A_TOKEN", T0, sealed))).isTrue();
        var replaced = new SealedSecret("B_TOKEN", T0.plusSeconds(5), new byte[]{1, 2, 3});
        assertThat(catalog().putSecret(TenantId.DEFAULT, replaced)).isFalse();

        assertThat(catalog().findSecret(TenantId.DEFAULT, "B_TOKEN")).contains(replaced);
        assertThat(catalog().secretsOf(TenantId.DEFAULT)).extracting(SealedSecret::name).containsExactly("A_TOKEN", "B_TOKEN");
        assertThat(catalog().deleteSecret(TenantId.DEFAULT, "A_TOKEN")).isTrue();
        assertThat(catalog().deleteSecret(TenantId.DEFAULT, "A_TOKEN")).isFalse();
        assertThat(catalog().findSecret(TenantId.DEFAULT, "A_TOKEN")).isEmpty();
        assertThat(catalog().secretsOf(TenantId.DEFAULT)).containsExactly(replaced);
    }

    @Test
    void twoTenantsSecretsOfOneNameAreIndependent() {
        var a = insertTenant("a").id();
        var b = insertTenant("b").id();
        var ofA = new SealedSecret("TOKEN", T0, new byte[]{1, 1});
        var ofB = new SealedSecret("TOKEN", T0.plusSeconds(1), new byte[]{2, 2});

        assertThat(catalog().putSecret(a, ofA)).isTrue();
        assertThat(catalog().putSecret(b, ofB)).isTrue(); // new for b, though a has one of that name

        assertThat(catalog().findSecret(a, "TOKEN")).contains(ofA);
        assertThat(catalog().findSecret(b, "TOKEN")).contains(ofB);
        assertThat(catalog().findSecret(TenantId.DEFAULT, "TOKEN")).isEmpty();

        var replacedOfA = new SealedSecret("TOKEN", T0.plusSeconds(2), new byte[]{3});
        assertThat(catalog().putSecret(a, replacedOfA)).isFalse();
        assertThat(catalog().findSecret(a, "TOKEN")).contains(replacedOfA);
        assertThat(catalog().findSecret(b, "TOKEN")).contains(ofB);

        assertThat(catalog().deleteSecret(a, "TOKEN")).isTrue();
        assertThat(catalog().deleteSecret(a, "TOKEN")).isFalse();
        assertThat(catalog().secretsOf(a)).isEmpty();
        assertThat(catalog().secretsOf(b)).containsExactly(ofB);
    }
}
