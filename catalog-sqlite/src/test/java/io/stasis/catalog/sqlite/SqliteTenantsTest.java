package io.stasis.catalog.sqlite;

import static io.stasis.catalog.sqlite.TestSandboxes.T0;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.auth.ApiKey;
import io.stasis.core.auth.Permission;
import io.stasis.core.auth.ScopedToken;
import io.stasis.core.auth.TokenScope;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.events.Event;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxQuery;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.secret.SealedSecret;
import io.stasis.core.tenant.Tenant;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.tenant.TenantQuota;
import io.stasis.core.tenant.TenantUsage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Tenants in the catalog: their rows and quotas, what each one owns (sandboxes, keys, tokens,
 * secrets, events) and that no tenant's records leak into another's.
 */
class SqliteTenantsTest extends FreshCatalog {
    /** After the default tenant's creation (the migration stamps it with the time the catalog was opened). */
    private static final Instant LATER = Instant.now().plusSeconds(60);

    private static Tenant tenant(String name, TenantQuota quota, Instant createdAt) {
        return new Tenant(TenantId.random(), name, quota, createdAt);
    }

    private Tenant insertTenant(String name) {
        var t = tenant(name, TenantQuota.UNLIMITED, LATER);
        catalog.insertTenant(t);
        return t;
    }

    private static Sandbox sandboxOf(TenantId tenant, SandboxState state, int memoryMb, Instant createdAt) {
        return TestSandboxes.inTenant(TestSandboxes.sandbox(Optional.empty(), "tiny", state, createdAt,
                new Resources(1.0, memoryMb, 512, DISK_MB), Map.of(), Map.of()), tenant);
    }

    /** Every test sandbox's disk limit: disk counts whatever the state, until the sandbox is deleted. */
    private static final int DISK_MB = 100;

    private static Sandbox namedIn(TenantId tenant, String name) {
        return TestSandboxes.inTenant(TestSandboxes.named(name), tenant);
    }

    private static ApiKey key(TenantId tenant, Instant createdAt) {
        return new ApiKey("key_" + Ids.randomSuffix(), tenant, Ids.randomSuffix().repeat(4), false, createdAt);
    }

    private static ScopedToken token(TenantId tenant, TokenScope scope, Instant createdAt, Instant expiresAt) {
        return new ScopedToken("tok_" + Ids.randomSuffix(), tenant, Ids.randomSuffix().repeat(4), Optional.empty(), scope,
                Set.of(Permission.SANDBOX_READ), createdAt, expiresAt);
    }

    private static ScopedToken sandboxToken(TenantId tenant, SandboxId sandbox) {
        return token(tenant, new TokenScope.Sandbox(sandbox), T0, T0.plusSeconds(3600));
    }

    private static SandboxQuery ofTenant(TenantId tenant, Optional<String> cursor, int limit) {
        return new SandboxQuery(Optional.empty(), Map.of(), cursor, limit, Optional.of(tenant));
    }

    @Nested
    class Tenants {
        @Test
        void theDefaultTenantExistsFromTheStartUnlimited() {
            var found = catalog.findTenant(TenantId.DEFAULT).orElseThrow();
            assertThat(found.name()).isEqualTo("default");
            assertThat(found.quota()).isEqualTo(TenantQuota.UNLIMITED);
            assertThat(found.createdAt()).isBefore(LATER);
            assertThat(catalog.allTenants()).containsExactly(found);
        }

        @Test
        void insertFindAndAllOldestFirst() {
            var defaultTenant = catalog.findTenant(TenantId.DEFAULT).orElseThrow();
            var limited = tenant("acme", new TenantQuota(Optional.of(0), Optional.of(Long.MAX_VALUE), Optional.of(1L)), LATER.plusSeconds(2));
            var unlimited = tenant("globex-2", TenantQuota.UNLIMITED, LATER.plusNanos(1));
            catalog.insertTenant(limited);
            catalog.insertTenant(unlimited);

            assertThat(catalog.findTenant(limited.id())).contains(limited);
            assertThat(catalog.findTenant(unlimited.id())).contains(unlimited);
            assertThat(catalog.findTenant(TenantId.random())).isEmpty();
            assertThat(catalog.allTenants()).containsExactly(defaultTenant, unlimited, limited);
        }

        @Test
        void updateReplacesTheQuotaOnly() {
            var t = tenant("acme", new TenantQuota(Optional.of(3), Optional.empty(), Optional.of(100L)), LATER);
            catalog.insertTenant(t);

            var changed = t.withQuota(new TenantQuota(Optional.empty(), Optional.of(4096L), Optional.empty()));
            catalog.updateTenant(changed);
            assertThat(catalog.findTenant(t.id())).contains(changed);

            catalog.updateTenant(changed.withQuota(TenantQuota.UNLIMITED));
            assertThat(catalog.findTenant(t.id()).orElseThrow().quota()).isEqualTo(TenantQuota.UNLIMITED);
            assertThat(catalog.findTenant(t.id()).orElseThrow().name()).isEqualTo("acme");
        }

        @Test
        void aDuplicateNameIsNameTakenAndStoresNothing() {
            var first = insertTenant("acme");

            for (String taken : List.of("acme", "default")) {
                var clash = tenant(taken, TenantQuota.UNLIMITED, LATER.plusSeconds(1));
                assertThatThrownBy(() -> catalog.insertTenant(clash)).as(taken)
                        .isInstanceOfSatisfying(StasisException.class, e -> {
                            assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                            assertThat(e.details()).containsEntry("name", taken);
                        });
                assertThat(catalog.findTenant(clash.id())).isEmpty();
            }
            assertThat(catalog.allTenants()).extracting(Tenant::id).containsExactly(TenantId.DEFAULT, first.id());
        }
    }

    @Nested
    class Sandboxes {
        @Test
        void namesAreUniquePerTenant() {
            var a = insertTenant("a").id();
            var b = insertTenant("b").id();
            var webOfA = namedIn(a, "web");
            var webOfB = namedIn(b, "web");
            var webOfDefault = TestSandboxes.named("web");
            catalog.insert(webOfA);
            catalog.insert(webOfB);
            catalog.insert(webOfDefault);

            assertThat(catalog.findByName(a, "web")).contains(webOfA);
            assertThat(catalog.findByName(b, "web")).contains(webOfB);
            assertThat(catalog.findByName(TenantId.DEFAULT, "web")).contains(webOfDefault);
            assertThat(catalog.findByName(TenantId.random(), "web")).isEmpty();

            assertThatThrownBy(() -> catalog.insert(namedIn(a, "web")))
                    .isInstanceOfSatisfying(StasisException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN);
                        assertThat(e.details()).containsEntry("name", "web");
                    });
            // Renaming into a name the tenant already uses is refused too; one another tenant uses is fine.
            var other = namedIn(a, "other");
            catalog.insert(other);
            var renamed = new Sandbox(other.id(), Optional.of("web"), other.template(), other.state(), other.createdAt(),
                    other.resources(), other.env(), other.metadata(), other.parentId(), other.checkpointId(), other.lifecycle(), a);
            assertThatThrownBy(() -> catalog.update(renamed))
                    .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NAME_TAKEN));
            catalog.insert(namedIn(b, "other"));
            assertThat(catalog.all()).hasSize(5);
        }

        @Test
        void listWithATenantShowsOnlyItsSandboxesPageByPage() {
            var a = insertTenant("a").id();
            var b = insertTenant("b").id();
            var ofA = new ArrayList<Sandbox>();
            var everyone = new ArrayList<Sandbox>();
            for (int i = 0; i < 12; i++) {
                var tenant = switch (i % 3) {
                    case 0 -> a;
                    case 1 -> b;
                    default -> TenantId.DEFAULT;
                };
                var s = sandboxOf(tenant, SandboxState.RUNNING, 1024, T0.plusSeconds(i));
                catalog.insert(s);
                everyone.add(s);
                if (tenant.equals(a)) ofA.add(s);
            }
            // Being deleted: hidden from list as ever.
            catalog.insert(sandboxOf(a, SandboxState.DELETED, 1024, T0.plusSeconds(20)));

            var seen = new ArrayList<Sandbox>();
            Optional<String> cursor = Optional.empty();
            do {
                var page = catalog.list(ofTenant(a, cursor, 2));
                seen.addAll(page.items());
                cursor = page.nextCursor();
            } while (cursor.isPresent());

            assertThat(seen).containsExactlyElementsOf(ofA);
            assertThat(catalog.list(ofTenant(TenantId.random(), Optional.empty(), 100)).items()).isEmpty();
            assertThat(catalog.list(SandboxQuery.all()).items()).containsExactlyElementsOf(everyone);
            assertThat(catalog.list(new SandboxQuery(Optional.of("running"), Map.of(), Optional.empty(), 100, Optional.of(b))).items())
                    .allSatisfy(s -> assertThat(s.tenant()).isEqualTo(b)).hasSize(4);
        }

        @Test
        void usageCountsRunningAndPausedSandboxesAndTheirMemoryAndEverySandboxsDiskPerTenant() {
            var a = insertTenant("a").id();
            var b = insertTenant("b").id();
            catalog.insert(sandboxOf(a, SandboxState.RUNNING, 1024, T0));
            catalog.insert(sandboxOf(a, SandboxState.PAUSED, 512, T0));
            catalog.insert(sandboxOf(a, new SandboxState.Hibernated(CheckpointId.random(), 1, T0), 4096, T0));
            catalog.insert(sandboxOf(a, new SandboxState.Stopped("idle"), 8192, T0));
            catalog.insert(sandboxOf(a, SandboxState.DELETED, 16384, T0));
            catalog.insert(sandboxOf(b, SandboxState.RUNNING, 256, T0));

            assertThat(catalog.usage(a)).isEqualTo(new TenantUsage(2, 1536, 4 * DISK_MB));
            assertThat(catalog.usage(b)).isEqualTo(new TenantUsage(1, 256, DISK_MB));
            assertThat(catalog.usage(TenantId.DEFAULT)).isEqualTo(TenantUsage.NONE);
            assertThat(catalog.usage(TenantId.random())).isEqualTo(TenantUsage.NONE);
        }

        @Test
        void usageFollowsStateChanges() {
            var a = insertTenant("a").id();
            var s = sandboxOf(a, SandboxState.RUNNING, 2048, T0);
            catalog.insert(s);
            assertThat(catalog.usage(a)).isEqualTo(new TenantUsage(1, 2048, DISK_MB));

            catalog.update(s.withState(new SandboxState.Hibernated(CheckpointId.random(), 1, T0)));
            assertThat(catalog.usage(a)).as("a hibernated sandbox keeps its disk").isEqualTo(new TenantUsage(0, 0, DISK_MB));
            catalog.update(s.withState(SandboxState.RUNNING));
            assertThat(catalog.usage(a)).isEqualTo(new TenantUsage(1, 2048, DISK_MB));
            catalog.delete(s.id());
            assertThat(catalog.usage(a)).isEqualTo(TenantUsage.NONE);
        }
    }

    @Nested
    class DeletingATenant {
        @Test
        void isRefusedWhileItHasASandboxAndThenRemovesItsKeysTokensAndSecretsOnly() {
            var doomed = insertTenant("doomed").id();
            var kept = insertTenant("kept").id();
            var sandbox = sandboxOf(doomed, SandboxState.RUNNING, 1024, T0);
            var keptSandbox = sandboxOf(kept, SandboxState.RUNNING, 1024, T0);
            catalog.insert(sandbox);
            catalog.insert(keptSandbox);
            var doomedKey = key(doomed, T0);
            var keptKey = key(kept, T0);
            var rootKey = new ApiKey("key_" + Ids.randomSuffix(), TenantId.DEFAULT, "ff".repeat(32), true, T0);
            List.of(doomedKey, keptKey, rootKey).forEach(catalog::insertApiKey);
            var doomedToken = token(doomed, new TokenScope.Volume("vol_1"), T0, T0.plusSeconds(60));
            var keptToken = sandboxToken(kept, keptSandbox.id());
            catalog.insertToken(doomedToken);
            catalog.insertToken(keptToken);
            var secret = new SealedSecret("TOKEN", T0, new byte[]{1});
            catalog.putSecret(doomed, secret);
            catalog.putSecret(kept, secret);
            catalog.putSecret(TenantId.DEFAULT, secret);

            assertThat(catalog.deleteTenantIfEmpty(doomed)).isFalse();
            assertThat(catalog.findTenant(doomed)).isPresent();
            assertThat(catalog.apiKeysOf(doomed)).containsExactly(doomedKey);
            assertThat(catalog.tokensOf(doomed)).containsExactly(doomedToken);
            assertThat(catalog.secretsOf(doomed)).containsExactly(secret);

            catalog.delete(sandbox.id());
            assertThat(catalog.deleteTenantIfEmpty(doomed)).isTrue();

            assertThat(catalog.findTenant(doomed)).isEmpty();
            assertThat(catalog.apiKeysOf(doomed)).isEmpty();
            assertThat(catalog.findApiKeyByHash(doomedKey.secretHash())).isEmpty();
            assertThat(catalog.tokensOf(doomed)).isEmpty();
            assertThat(catalog.findToken(doomedToken.id())).isEmpty();
            assertThat(catalog.secretsOf(doomed)).isEmpty();

            assertThat(catalog.findTenant(kept)).isPresent();
            assertThat(catalog.find(keptSandbox.id())).contains(keptSandbox);
            assertThat(catalog.apiKeysOf(kept)).containsExactly(keptKey);
            assertThat(catalog.apiKeysOf(TenantId.DEFAULT)).containsExactly(rootKey);
            assertThat(catalog.hasRootKey()).isTrue();
            assertThat(catalog.tokensOf(kept)).containsExactly(keptToken);
            assertThat(catalog.findSecret(kept, "TOKEN")).contains(secret);
            assertThat(catalog.findSecret(TenantId.DEFAULT, "TOKEN")).contains(secret);
        }

        @Test
        void aSandboxBeingDeletedStillCounts() {
            var t = insertTenant("t").id();
            catalog.insert(sandboxOf(t, SandboxState.DELETED, 1024, T0));

            assertThat(catalog.deleteTenantIfEmpty(t)).isFalse();
            assertThat(catalog.findTenant(t)).isPresent();
        }

        @Test
        void anEmptyTenantGoesAtOnce() {
            var t = insertTenant("empty").id();
            assertThat(catalog.deleteTenantIfEmpty(t)).isTrue();
            assertThat(catalog.findTenant(t)).isEmpty();
            assertThat(catalog.allTenants()).extracting(Tenant::id).containsExactly(TenantId.DEFAULT);
        }
    }

    @Nested
    class ApiKeys {
        @Test
        void eachTenantListsItsOwnKeysOldestFirst() {
            var a = insertTenant("a").id();
            var b = insertTenant("b").id();
            var aLate = key(a, T0.plusSeconds(2));
            var aEarly = key(a, T0);
            var bOnly = key(b, T0.plusSeconds(1));
            List.of(aLate, bOnly, aEarly).forEach(catalog::insertApiKey);

            assertThat(catalog.apiKeysOf(a)).containsExactly(aEarly, aLate);
            assertThat(catalog.apiKeysOf(b)).containsExactly(bOnly);
            assertThat(catalog.apiKeysOf(TenantId.DEFAULT)).isEmpty();
            assertThat(catalog.findApiKeyByHash(bOnly.secretHash())).contains(bOnly);
            assertThat(catalog.hasRootKey()).isFalse();
        }

        @Test
        void deleteApiKeyForgetsOneKeyIdempotently() {
            var a = insertTenant("a").id();
            var gone = key(a, T0);
            var kept = key(a, T0.plusSeconds(1));
            catalog.insertApiKey(gone);
            catalog.insertApiKey(kept);

            catalog.deleteApiKey(gone.id());
            catalog.deleteApiKey(gone.id());
            catalog.deleteApiKey("key_" + Ids.randomSuffix());

            assertThat(catalog.findApiKeyByHash(gone.secretHash())).isEmpty();
            assertThat(catalog.apiKeysOf(a)).containsExactly(kept);
        }
    }

    @Nested
    class Tokens {
        @Test
        void roundTripByHashIdAndTenant() {
            var a = insertTenant("a").id();
            var b = insertTenant("b").id();
            var sandbox = sandboxOf(a, SandboxState.RUNNING, 1024, T0);
            catalog.insert(sandbox);
            var full = new ScopedToken("tok_" + Ids.randomSuffix(), a, "aa".repeat(32), Optional.of("ci agent ✓"),
                    new TokenScope.Sandbox(sandbox.id()), Set.of(Permission.EXEC, Permission.FILES_READ, Permission.FILES_WRITE),
                    Instant.parse("2026-03-01T12:00:00.000000001Z"), Instant.parse("2026-03-01T13:00:00.000000001Z"));
            var volume = new ScopedToken("tok_" + Ids.randomSuffix(), a, "bb".repeat(32), Optional.empty(),
                    new TokenScope.Volume("vol_data"), Set.of(Permission.VOLUME_READ, Permission.VOLUME_WRITE), T0.minusSeconds(1), T0);
            var ofB = sandboxToken(b, SandboxId.random());
            List.of(full, volume, ofB).forEach(catalog::insertToken);

            assertThat(catalog.findTokenByHash(full.secretHash())).contains(full);
            assertThat(catalog.findTokenByHash(volume.secretHash())).contains(volume);
            assertThat(catalog.findTokenByHash("cc".repeat(32))).isEmpty();
            assertThat(catalog.findToken(full.id())).contains(full);
            assertThat(catalog.findToken("tok_" + Ids.randomSuffix())).isEmpty();
            assertThat(catalog.tokensOf(a)).containsExactly(volume, full);
            assertThat(catalog.tokensOf(b)).containsExactly(ofB);
            assertThat(catalog.tokensOf(TenantId.DEFAULT)).isEmpty();
        }

        @Test
        void deleteTokenForgetsOneTokenIdempotently() {
            var a = insertTenant("a").id();
            var gone = sandboxToken(a, SandboxId.random());
            var kept = sandboxToken(a, SandboxId.random());
            catalog.insertToken(gone);
            catalog.insertToken(kept);

            catalog.deleteToken(gone.id());
            catalog.deleteToken(gone.id());

            assertThat(catalog.findToken(gone.id())).isEmpty();
            assertThat(catalog.findTokenByHash(gone.secretHash())).isEmpty();
            assertThat(catalog.tokensOf(a)).containsExactly(kept);
        }

        @Test
        void deleteTokensExpiredBeforeKeepsThoseExpiringAtOrAfterThatInstant() {
            var a = insertTenant("a").id();
            var b = insertTenant("b").id();
            var scope = new TokenScope.Sandbox(SandboxId.random());
            var expired = token(a, scope, T0.minusSeconds(10), T0.minusNanos(1));
            var expiredOfB = token(b, scope, T0.minusSeconds(10), T0.minusSeconds(5));
            var expiringNow = token(a, scope, T0.minusSeconds(9), T0);
            var live = token(a, scope, T0.minusSeconds(8), T0.plusSeconds(60));
            List.of(expired, expiredOfB, expiringNow, live).forEach(catalog::insertToken);

            catalog.deleteTokensExpiredBefore(T0);

            assertThat(catalog.tokensOf(a)).containsExactly(expiringNow, live);
            assertThat(catalog.tokensOf(b)).isEmpty();
        }

        @Test
        void deletingASandboxRevokesTheTokensScopedToIt() {
            var a = insertTenant("a").id();
            var gone = sandboxOf(a, SandboxState.RUNNING, 1024, T0);
            var kept = sandboxOf(a, SandboxState.RUNNING, 1024, T0);
            catalog.insert(gone);
            catalog.insert(kept);
            var ofGone = sandboxToken(a, gone.id());
            var alsoOfGone = sandboxToken(a, gone.id());
            var ofKept = sandboxToken(a, kept.id());
            // A volume that happens to carry the same id is another resource.
            var volume = token(a, new TokenScope.Volume(gone.id().value()), T0, T0.plusSeconds(60));
            List.of(ofGone, alsoOfGone, ofKept, volume).forEach(catalog::insertToken);

            catalog.delete(gone.id());

            assertThat(catalog.findToken(ofGone.id())).isEmpty();
            assertThat(catalog.findTokenByHash(alsoOfGone.secretHash())).isEmpty();
            assertThat(catalog.tokensOf(a)).containsExactlyInAnyOrder(ofKept, volume);
        }
    }

    @Nested
    class Secrets {
        @Test
        void twoTenantsSecretsOfOneNameAreIndependent() {
            var a = insertTenant("a").id();
            var b = insertTenant("b").id();
            var ofA = new SealedSecret("TOKEN", T0, new byte[]{1, 1});
            var ofB = new SealedSecret("TOKEN", T0.plusSeconds(1), new byte[]{2, 2});

            assertThat(catalog.putSecret(a, ofA)).isTrue();
            assertThat(catalog.putSecret(b, ofB)).isTrue(); // new for b, though a has one of that name

            assertThat(catalog.findSecret(a, "TOKEN")).contains(ofA);
            assertThat(catalog.findSecret(b, "TOKEN")).contains(ofB);
            assertThat(catalog.findSecret(TenantId.DEFAULT, "TOKEN")).isEmpty();

            var replacedOfA = new SealedSecret("TOKEN", T0.plusSeconds(2), new byte[]{3});
            assertThat(catalog.putSecret(a, replacedOfA)).isFalse();
            assertThat(catalog.findSecret(a, "TOKEN")).contains(replacedOfA);
            assertThat(catalog.findSecret(b, "TOKEN")).contains(ofB);

            assertThat(catalog.deleteSecret(a, "TOKEN")).isTrue();
            assertThat(catalog.deleteSecret(a, "TOKEN")).isFalse();
            assertThat(catalog.secretsOf(a)).isEmpty();
            assertThat(catalog.secretsOf(b)).containsExactly(ofB);
        }
    }

    @Nested
    class Events {
        @Test
        void aTenantSeesItsOwnEventsAndThoseOfNoTenantInIdOrder() {
            var a = insertTenant("a").id();
            var b = insertTenant("b").id();
            var sandboxOfA = SandboxId.random();
            var sandboxOfB = SandboxId.random();
            var seenByA = new ArrayList<Event>();
            var everything = new ArrayList<Event>();
            for (int i = 0; i < 15; i++) {
                var event = switch (i % 3) {
                    case 0 -> new Event(0, T0, "lifecycle", Optional.of(sandboxOfA), Map.of("i", (long) i), Optional.of(a));
                    case 1 -> new Event(0, T0, "lifecycle", Optional.of(sandboxOfB), Map.of("i", (long) i), Optional.of(b));
                    default -> new Event(0, T0, "error", Optional.empty(), Map.of("i", (long) i), Optional.empty());
                };
                var appended = catalog.appendEvent(event);
                everything.add(appended);
                if (appended.visibleTo(a)) seenByA.add(appended);
            }
            // About a sandbox whose tenant was unknown when it was recorded (its record already gone): nobody's.
            var orphan = catalog.appendEvent(new Event(0, T0, "network.denied", Optional.of(SandboxId.random()), Map.of(), Optional.empty()));
            assertThat(orphan.visibleTo(a)).isFalse();

            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.of(a), 100)).containsExactlyElementsOf(seenByA);
            assertThat(seenByA).extracting(Event::tenant).containsOnly(Optional.of(a), Optional.empty()).hasSize(10);
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.of(a), 3)).containsExactlyElementsOf(seenByA.subList(0, 3));
            assertThat(catalog.eventsAfter(seenByA.get(3).id(), Optional.empty(), Optional.of(a), 100))
                    .containsExactlyElementsOf(seenByA.subList(4, seenByA.size()));
            // A tenant with no events still sees those of no sandbox, and not the orphan.
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.of(TenantId.random()), 100))
                    .containsExactlyElementsOf(everything.stream().filter(e -> e.sandbox().isEmpty()).toList());
            // With a sandbox too: another tenant's sandbox shows nothing.
            assertThat(catalog.eventsAfter(0, Optional.of(sandboxOfA), Optional.of(a), 100))
                    .containsExactlyElementsOf(seenByA.stream().filter(e -> e.sandbox().isPresent()).toList());
            assertThat(catalog.eventsAfter(0, Optional.of(sandboxOfB), Optional.of(a), 100)).isEmpty();
            everything.add(orphan);
            assertThat(catalog.eventsAfter(0, Optional.empty(), Optional.empty(), 100)).containsExactlyElementsOf(everything);
        }
    }
}
