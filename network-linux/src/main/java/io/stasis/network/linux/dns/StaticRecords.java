package io.stasis.network.linux.dns;

import io.stasis.core.network.DomainPattern;
import java.net.Inet4Address;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Names the resolver answers itself (operators' internal names, test hosts), by their normalized
 * form. The egress policy still decides whether a sandbox may resolve them.
 */
record StaticRecords(Map<String, List<Inet4Address>> byName) {

    StaticRecords {
        var normalized = new HashMap<String, List<Inet4Address>>();
        byName.forEach((name, addresses) -> {
            String key = DomainPattern.normalize(name);
            DnsName.check(key);
            if (normalized.put(key, List.copyOf(addresses)) != null)
                throw new IllegalArgumentException("static record '" + name + "' is given twice (names compare without case)");
        });
        byName = Map.copyOf(normalized);
    }

    /** The addresses of {@code name} (normalized), if it is a static name; an empty list is a name without A records. */
    Optional<List<Inet4Address>> lookup(String name) {
        return Optional.ofNullable(byName.get(name));
    }
}
