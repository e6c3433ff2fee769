package io.stasis.sdk;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The body of {@code POST /v1/tokens}: a token that may do only {@code permissions} with one
 * sandbox (or volume), until {@code ttlSeconds} pass or it is revoked.
 *
 * <pre>{@code
 * TokenInfo t = client.tokens().issue(TokenRequest.forSandbox(sandbox.id(), "exec", "files:read", "files:write")
 *         .withTtl(Duration.ofHours(2)).withName("agent-run-42"));
 * try (var agent = StasisClient.connect(url, t.token())) { ... }
 * }</pre>
 *
 * @param permissions {@code sandbox:read}, {@code sandbox:lifecycle}, {@code sandbox:delete}, {@code exec},
 *                    {@code files:read}, {@code files:write}, {@code checkpoints}, {@code network},
 *                    {@code previews}; for a volume {@code volume:read}, {@code volume:write}
 * @param ttlSeconds  1 s to 30 days; null for the service's default (1 hour)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record TokenRequest(TokenInfo.Scope scope, List<String> permissions, Long ttlSeconds, String name) {
    public TokenRequest {
        Objects.requireNonNull(scope, "scope");
        permissions = List.copyOf(permissions);
    }

    public static TokenRequest forSandbox(String sandboxIdOrName, String... permissions) {
        return new TokenRequest(new TokenInfo.Scope(sandboxIdOrName, null), List.of(permissions), null, null);
    }

    public static TokenRequest forVolume(String volumeId, String... permissions) {
        return new TokenRequest(new TokenInfo.Scope(null, volumeId), List.of(permissions), null, null);
    }

    public TokenRequest withTtl(Duration ttl) {
        return new TokenRequest(scope, permissions, ttl == null ? null : ttl.toSeconds(), name);
    }

    public TokenRequest withName(String newName) {
        return new TokenRequest(scope, permissions, ttlSeconds, newName);
    }
}
