package io.stasis.core.sandbox;

import java.util.List;
import java.util.Optional;

/** One page of a list, and where the next one starts (empty on the last page). */
public record Page<T>(List<T> items, Optional<String> nextCursor) {
    public Page {
        items = List.copyOf(items);
    }
}
