package io.stasis.core.preview;

import io.stasis.core.sandbox.SandboxId;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One TCP port of a sandbox exposed over HTTP through the service's preview listener.
 *
 * @param isPublic  true: anyone who can reach the preview listener gets through; false: only
 *                  requests carrying the preview's token
 * @param tokenHash the SHA-256 hash (hex) of the token of a private preview; empty for a public
 *                  one. The token itself is known only to whoever created the preview.
 * @param expiresAt when it stops admitting requests; empty for never
 */
public record Preview(PreviewId id, SandboxId sandboxId, int port, boolean isPublic, Optional<String> tokenHash,
                      Instant createdAt, Optional<Instant> expiresAt) {
    public static final int MIN_PORT = 1;
    public static final int MAX_PORT = 65535;
    /** The port of a preview of every port of its sandbox. */
    public static final int EVERY_PORT = 0;

    public Preview {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(sandboxId, "sandboxId");
        Objects.requireNonNull(tokenHash, "tokenHash");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(expiresAt, "expiresAt");
        if (!isPort(port)) throw new IllegalArgumentException("port must be 1-65535, or 0 for every port, was " + port);
        if (isPublic == tokenHash.isPresent())
            throw new IllegalArgumentException("a private preview has a token hash and a public one none (" + id + ")");
    }

    /** Whether a preview may be of {@code port}: a TCP port, or {@link #EVERY_PORT}. */
    public static boolean isPort(int port) {
        return port == EVERY_PORT || port >= MIN_PORT && port <= MAX_PORT;
    }

    /** Whether it exposes {@code requested}: its own port, or every port. */
    public boolean exposes(int requested) {
        return port == EVERY_PORT || port == requested;
    }

    /** Whether it no longer admits requests at {@code now}. */
    public boolean isExpired(Instant now) {
        return expiresAt.isPresent() && !now.isBefore(expiresAt.get());
    }

    /** Whether {@code presented} is this private preview's token (false for a public preview: it has none). */
    public boolean acceptsToken(String presented) {
        return tokenHash.isPresent() && PreviewTokens.matches(presented, tokenHash.get());
    }
}
