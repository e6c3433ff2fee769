package io.stasis.core.preview;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.spi.PreviewCatalog;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Previews: ports of sandboxes exposed over HTTP. Creates them (a private one with a fresh token
 * that only the caller ever sees), lists, revokes, and decides for each proxied request whether
 * it may pass. Previews live in the catalog and go with their sandbox.
 */
public final class PreviewService {
    private static final Logger log = LoggerFactory.getLogger(PreviewService.class);
    /** The longest time to live a preview may be given. */
    public static final Duration MAX_TTL = Duration.ofDays(30);

    private final PreviewCatalog catalog;
    private final Clock clock;
    private final List<Consumer<Preview>> revocationListeners = new CopyOnWriteArrayList<>();

    public PreviewService(PreviewCatalog catalog, Clock clock) {
        this.catalog = catalog;
        this.clock = clock;
    }

    /** A new preview, with its token when private: the only place the token ever appears. */
    public record Created(Preview preview, Optional<String> token) {
    }

    /**
     * Creates a preview of {@code port}, or of every port of the sandbox ({@link Preview#EVERY_PORT}).
     * <p>Effects on success: the preview is in the catalog and admits requests at once.
     * <p>On failure: {@code invalid_request} for a port outside 1-65535 or a time to live not in
     * (0, 30 days]; {@code sandbox_not_found} when the sandbox is gone or being deleted. Nothing is stored.
     */
    public Created create(SandboxId sandbox, int port, boolean isPublic, Optional<Duration> ttl) {
        if (!Preview.isPort(port))
            throw StasisException.invalid("port", "must be between 1 and 65535, or 0 for every port, was " + port);
        ttl.ifPresent(t -> {
            if (t.isNegative() || t.isZero() || t.compareTo(MAX_TTL) > 0)
                throw StasisException.invalid("ttlSeconds", "must be between 1 and " + MAX_TTL.toSeconds() + " (30 days), was " + t.toSeconds());
        });
        var now = clock.instant();
        Optional<String> token = isPublic ? Optional.empty() : Optional.of(PreviewTokens.issue());
        var preview = new Preview(PreviewId.random(), sandbox, port, isPublic, token.map(PreviewTokens::hash), now,
                ttl.map(now::plus));
        if (!catalog.insertPreview(preview)) throw StasisException.sandboxNotFound(sandbox.value());
        log.atInfo().addKeyValue("sandbox", sandbox).addKeyValue("preview", preview.id()).addKeyValue("port", port)
                .addKeyValue("public", isPublic).log("preview created");
        return new Created(preview, token);
    }

    /** The sandbox's previews, expired ones included, oldest first. */
    public List<Preview> list(SandboxId sandbox) {
        return catalog.previewsOf(sandbox);
    }

    /** {@code preview_not_found} unless the preview exists and belongs to {@code sandbox}. */
    public Preview get(SandboxId sandbox, String previewId) {
        if (!PreviewId.isValid(previewId)) throw notFound(previewId);
        return catalog.findPreview(new PreviewId(previewId)).filter(p -> p.sandboxId().equals(sandbox))
                .orElseThrow(() -> notFound(previewId));
    }

    /**
     * Revokes a preview: it admits no further request, and connections it admitted are cut (the
     * revocation listeners close them).
     * <p>On failure: {@code preview_not_found}; nothing changes.
     */
    public void delete(SandboxId sandbox, String previewId) {
        var preview = get(sandbox, previewId);
        catalog.deletePreview(preview.id());
        log.atInfo().addKeyValue("sandbox", sandbox).addKeyValue("preview", preview.id()).log("preview revoked");
        for (var listener : revocationListeners) {
            try {
                listener.accept(preview);
            } catch (RuntimeException e) {
                log.atWarn().addKeyValue("preview", preview.id()).setCause(e).log("a revocation listener failed");
            }
        }
    }

    /** Called with each preview once it is revoked through {@link #delete}. */
    public void onRevoked(Consumer<Preview> listener) {
        revocationListeners.add(listener);
    }

    /** Whether a request to {@code port} of {@code sandbox} carrying {@code token} may pass now. */
    public PreviewAccess admit(SandboxId sandbox, int port, Optional<String> token) {
        var ofPort = catalog.previewsOf(sandbox).stream().filter(p -> p.exposes(port)).toList();
        return PreviewAccess.decide(ofPort, token, clock.instant());
    }

    public static StasisException notFound(String previewId) {
        return new StasisException(ErrorCode.PREVIEW_NOT_FOUND, "no preview with id '" + previewId + "' in this sandbox",
                Map.of("preview", previewId));
    }
}
