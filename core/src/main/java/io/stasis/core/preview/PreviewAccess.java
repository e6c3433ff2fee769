package io.stasis.core.preview;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/** Whether a request to a sandbox's port may pass, and if so through which preview. */
public sealed interface PreviewAccess {

    /** The request may pass; {@code preview} is the one that admitted it (revoking it cuts the connection). */
    record Admitted(Preview preview) implements PreviewAccess {
        public Admitted {
            Objects.requireNonNull(preview);
        }
    }

    /** The request is refused, for {@code reason}. */
    record Denied(Reason reason) implements PreviewAccess {
        public Denied {
            Objects.requireNonNull(reason);
        }
    }

    enum Reason {
        /** No preview exposes that port of that sandbox. */
        NOT_FOUND,
        /** Every preview of that port has expired. */
        EXPIRED,
        /** Only private previews are live and the request carries no token. */
        TOKEN_MISSING,
        /** Only private previews are live and the request's token is none of theirs. */
        TOKEN_WRONG
    }

    /**
     * The decision for a request to one port, given every preview of that port: a live private
     * preview whose token the request carries admits it first, then any live public preview.
     * A pure function of its arguments.
     */
    static PreviewAccess decide(List<Preview> ofPort, Optional<String> token, Instant now) {
        if (ofPort.isEmpty()) return new Denied(Reason.NOT_FOUND);
        var live = ofPort.stream().filter(p -> !p.isExpired(now)).toList();
        if (live.isEmpty()) return new Denied(Reason.EXPIRED);
        if (token.isPresent()) {
            for (var p : live) if (p.acceptsToken(token.get())) return new Admitted(p);
        }
        for (var p : live) if (p.isPublic()) return new Admitted(p);
        return new Denied(token.isPresent() ? Reason.TOKEN_WRONG : Reason.TOKEN_MISSING);
    }
}
