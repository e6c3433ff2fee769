package io.stasis.core.network;

import java.util.Objects;

/** A sandbox's network policy as the API sets it: where it may connect. */
public record NetworkPolicy(EgressPolicy egress) {

    public NetworkPolicy {
        Objects.requireNonNull(egress);
    }
}
