package io.stasis.core.node;

import java.net.URI;
import java.time.Instant;

/**
 * A Stasis service sharing the catalog with others: its name, where the others reach it, and its
 * lease. A node whose lease has lapsed is taken as gone: its sandboxes answer {@code node_unavailable}
 * through the others until it comes back.
 *
 * @param name         unique among the nodes of a catalog ({@code --node-name}, the host name by default)
 * @param advertiseUrl the base URL other nodes forward requests to ({@code --advertise-url})
 * @param startedAt    when this run of the node registered
 * @param leaseUntil   when the node is taken as gone unless it renews
 * @param capacity     what the node reported at its last renewal
 */
public record Node(String name, URI advertiseUrl, Instant startedAt, Instant leaseUntil, NodeCapacity capacity) {

    /** Whether the lease holds at {@code now}. */
    public boolean alive(Instant now) {
        return leaseUntil.isAfter(now);
    }
}
