package io.stasis.core.auth;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.Ids;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.VolumeCatalog;
import io.stasis.core.tenant.TenantId;
import io.stasis.core.volume.VolumeId;
import io.stasis.core.volume.VolumeService;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Scoped tokens: a tenant hands one to a program that should do only some things with one sandbox
 * or volume (an agent that may run commands and edit files, a pipeline that uploads to a volume).
 */
public final class TokenService {
    private static final Logger log = LoggerFactory.getLogger(TokenService.class);
    public static final Duration MAX_TTL = Duration.ofDays(30);
    public static final Duration DEFAULT_TTL = Duration.ofHours(1);
    private static final int MAX_NAME = 100;

    private final Catalog catalog;
    private final Clock clock;

    private final VolumeCatalog volumes;

    public TokenService(Catalog catalog, Clock clock, VolumeCatalog volumes) {
        this.catalog = catalog;
        this.clock = clock;
        this.volumes = volumes;
    }

    /** A new token and its secret; the secret exists only in the returned value. */
    public record Issued(ScopedToken token, String secret) {
        @Override
        public String toString() {
            return "Issued[" + token.id() + "]";
        }
    }

    /**
     * Issues a token of {@code tenant} for {@code scope}.
     * <p>On failure: {@code invalid_request} for no permissions, one that does not apply to the
     * scope, or a ttl outside 1 s .. 30 days; the scope's not-found code if the tenant has no such
     * sandbox or volume. Nothing is stored.
     */
    public Issued issue(TenantId tenant, TokenScope scope, Set<Permission> permissions, Optional<Duration> ttl, Optional<String> name) {
        if (permissions.isEmpty()) throw StasisException.invalid("permissions", "list at least one permission");
        for (var p : permissions)
            if (p.target() != scope.target())
                throw StasisException.invalid("permissions", "'" + p.wireName() + "' does not apply to a " + scope.target().name().toLowerCase() + " scope");
        var lifetime = ttl.orElse(DEFAULT_TTL);
        if (lifetime.compareTo(Duration.ofSeconds(1)) < 0 || lifetime.compareTo(MAX_TTL) > 0)
            throw StasisException.invalid("ttlSeconds", "must be between 1 and " + MAX_TTL.toSeconds() + " (30 days)");
        name.ifPresent(n -> {
            if (n.isBlank() || n.length() > MAX_NAME) throw StasisException.invalid("name", "must be 1-" + MAX_NAME + " characters");
        });
        requireTarget(tenant, scope);
        var now = clock.instant();
        catalog.deleteTokensExpiredBefore(now);
        String secret = CredentialSecrets.generate(Credentials.TOKEN_PREFIX);
        var token = new ScopedToken("tok_" + Ids.randomSuffix(), tenant, CredentialSecrets.hash(secret), name, scope, permissions,
                now, now.plus(lifetime));
        catalog.insertToken(token);
        log.atInfo().addKeyValue("token", token.id()).addKeyValue("tenant", tenant).addKeyValue("scope", scope.resourceId())
                .addKeyValue("permissions", permissions).addKeyValue("expiresAt", token.expiresAt()).log("token issued");
        return new Issued(token, secret);
    }

    /** The tenant's tokens that have not expired, oldest first. */
    public List<ScopedToken> list(TenantId tenant) {
        var now = clock.instant();
        return catalog.tokensOf(tenant).stream().filter(t -> !t.expiredAt(now)).toList();
    }

    public ScopedToken get(TenantId tenant, String id) {
        return catalog.findToken(id).filter(t -> t.tenant().equals(tenant)).orElseThrow(() -> notFound(id));
    }

    /** Revokes a token: the next request presenting it is refused. */
    public void revoke(TenantId tenant, String id) {
        var token = get(tenant, id);
        catalog.deleteToken(token.id());
        log.atInfo().addKeyValue("token", id).addKeyValue("tenant", tenant).log("token revoked");
    }

    private void requireTarget(TenantId tenant, TokenScope scope) {
        switch (scope) {
            case TokenScope.Sandbox s -> catalog.find(s.id())
                    .filter(sandbox -> sandbox.tenant().equals(tenant) && !(sandbox.state() instanceof SandboxState.Deleted))
                    .orElseThrow(() -> StasisException.sandboxNotFound(s.id().value()));
            case TokenScope.Volume v -> Optional.of(v.id()).filter(VolumeId::isValid)
                    .flatMap(id -> volumes.findVolume(new VolumeId(id)))
                    .filter(volume -> volume.tenant().equals(tenant))
                    .orElseThrow(() -> VolumeService.notFound(v.id()));
        }
    }

    public static StasisException notFound(String id) {
        return new StasisException(ErrorCode.TOKEN_NOT_FOUND, "no token '" + id + "'", Map.of("token", id));
    }
}
