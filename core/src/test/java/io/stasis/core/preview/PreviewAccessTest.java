package io.stasis.core.preview;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.preview.PreviewAccess.Admitted;
import io.stasis.core.preview.PreviewAccess.Denied;
import io.stasis.core.preview.PreviewAccess.Reason;
import io.stasis.core.sandbox.SandboxId;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PreviewAccessTest {
    private static final Instant NOW = Instant.parse("2026-05-01T10:00:00Z");
    private static final SandboxId SANDBOX = SandboxId.random();

    private static Preview privateWith(String token, Optional<Instant> expiresAt) {
        return new Preview(PreviewId.random(), SANDBOX, 3000, false, Optional.of(PreviewTokens.hash(token)), NOW.minusSeconds(10), expiresAt);
    }

    private static Preview publicOne() {
        return new Preview(PreviewId.random(), SANDBOX, 3000, true, Optional.empty(), NOW.minusSeconds(10), Optional.empty());
    }

    @Test
    void aPreviewOfEveryPortExposesEachPortAndOnlyItsOwnDoes() {
        var every = new Preview(PreviewId.random(), SANDBOX, Preview.EVERY_PORT, true, Optional.empty(), NOW, Optional.empty());
        assertThat(every.exposes(1)).isTrue();
        assertThat(every.exposes(8000)).isTrue();
        assertThat(every.exposes(65535)).isTrue();
        assertThat(publicOne().exposes(3000)).isTrue();
        assertThat(publicOne().exposes(3001)).isFalse();
        assertThatThrownBy(() -> new Preview(PreviewId.random(), SANDBOX, 65536, true, Optional.empty(), NOW, Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Preview(PreviewId.random(), SANDBOX, -1, true, Optional.empty(), NOW, Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void noPreviewIsNotFound() {
        assertThat(PreviewAccess.decide(List.of(), Optional.empty(), NOW)).isEqualTo(new Denied(Reason.NOT_FOUND));
    }

    @Test
    void onlyExpiredPreviewsAreExpired() {
        String token = PreviewTokens.issue();
        var expired = privateWith(token, Optional.of(NOW));
        assertThat(PreviewAccess.decide(List.of(expired), Optional.of(token), NOW)).isEqualTo(new Denied(Reason.EXPIRED));
        assertThat(PreviewAccess.decide(List.of(expired), Optional.of(token), NOW.minusNanos(1))).isEqualTo(new Admitted(expired));
    }

    @Test
    void privatePreviewsNeedTheirToken() {
        String token = PreviewTokens.issue();
        var preview = privateWith(token, Optional.empty());
        assertThat(PreviewAccess.decide(List.of(preview), Optional.empty(), NOW)).isEqualTo(new Denied(Reason.TOKEN_MISSING));
        assertThat(PreviewAccess.decide(List.of(preview), Optional.of(PreviewTokens.issue()), NOW)).isEqualTo(new Denied(Reason.TOKEN_WRONG));
        assertThat(PreviewAccess.decide(List.of(preview), Optional.of("short"), NOW)).isEqualTo(new Denied(Reason.TOKEN_WRONG));
        assertThat(PreviewAccess.decide(List.of(preview), Optional.of(token), NOW)).isEqualTo(new Admitted(preview));
    }

    @Test
    void theMatchingPrivatePreviewAdmitsBeforeAPublicOne() {
        String token = PreviewTokens.issue();
        var open = publicOne();
        var mine = privateWith(token, Optional.empty());
        assertThat(PreviewAccess.decide(List.of(open, mine), Optional.of(token), NOW)).isEqualTo(new Admitted(mine));
        assertThat(PreviewAccess.decide(List.of(open, mine), Optional.empty(), NOW)).isEqualTo(new Admitted(open));
        assertThat(PreviewAccess.decide(List.of(open, mine), Optional.of("wrong"), NOW)).isEqualTo(new Admitted(open));
    }

    @Test
    void tokensAreFortyThreeUrlSafeCharacters() {
        String token = PreviewTokens.issue();
        assertThat(token).hasSize(PreviewTokens.LENGTH).matches("[A-Za-z0-9_-]+");
        assertThat(PreviewTokens.hash(token)).hasSize(64).isNotEqualTo(token);
    }

    @Test
    void aPublicPreviewHasNoTokenHashAndAPrivateOneHasOne() {
        assertThatThrownBy(() -> new Preview(PreviewId.random(), SANDBOX, 80, true, Optional.of("x"), NOW, Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Preview(PreviewId.random(), SANDBOX, 80, false, Optional.empty(), NOW, Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
