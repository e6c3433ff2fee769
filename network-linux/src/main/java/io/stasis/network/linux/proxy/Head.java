package io.stasis.network.linux.proxy;

import java.util.Optional;

/** What a {@link HeadParser} made of the bytes a client has sent so far. */
sealed interface Head {
    /** More bytes are needed. */
    record Partial() implements Head {
    }

    /**
     * The ClientHello or request head is complete.
     *
     * @param name the normalized name it presented (lowercase, no trailing dot), empty if none or an IP literal
     */
    record Complete(Optional<String> name) implements Head {
    }

    Partial PARTIAL = new Partial();
}
