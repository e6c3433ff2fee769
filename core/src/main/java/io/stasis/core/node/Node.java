package io.stasis.core.node;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * A Stasis service sharing the catalog with others: its name, where the others reach it, and its
 * lease. A node whose lease has lapsed is taken as gone: its sandboxes answer {@code node_unavailable}
 * through the others until it comes back.
 *
 * @param name         unique among the nodes of a catalog ({@code --node-name}, the host name by default)
 * @param advertiseUrl the base URL other nodes forward requests to ({@code --advertise-url})
 * @param previewUrl   where other nodes pass on preview requests for its sandboxes: its preview listener, as
 *                     reached at the advertise URL's host (empty for a node that registered without one)
 * @param startedAt    when this run of the node registered
 * @param leaseUntil   when the node is taken as gone unless it renews
 * @param capacity     what the node reported at its last renewal
 * @param draining     whether it is being drained: the other nodes take its sandboxes as it hibernates them,
 *                     and it places no new ones (a new registration, as after a restart, ends it)
 */
public record Node(String name, URI advertiseUrl, Optional<URI> previewUrl, Instant startedAt, Instant leaseUntil, NodeCapacity capacity, boolean draining) {

    /** Whether the lease holds at {@code now}. */
    public boolean alive(Instant now) {
        return leaseUntil.isAfter(now);
    }

    /** Whether the node is lost at {@code now}: its lease lapsed longer than {@code grace} ago, and it is not being drained. */
    public boolean lost(Instant now, Duration grace) {
        return !draining && !leaseUntil.plus(grace).isAfter(now);
    }
}
