package io.stasis.network.linux.dns;

import io.stasis.core.network.DomainPattern;
import java.net.InetAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;

/**
 * What an upstream answer means for the egress policy: the addresses the asked name ends at
 * (through its CNAME chain), how long the shortest link of that chain may be cached, and every
 * alias target named in the answer section, each of which the policy must allow too.
 */
record UpstreamAnswer(List<InetAddress> addresses, Duration ttl, List<String> aliasTargets) {

    UpstreamAnswer {
        addresses = List.copyOf(addresses);
        aliasTargets = List.copyOf(aliasTargets);
    }

    /** Reads {@code answer} for {@code name} (normalized). A chain that loops ends at no addresses. */
    static UpstreamAnswer of(DnsMessage answer, String name) {
        List<DnsRecord> records = answer.answers();
        String current = name;
        long ttl = Long.MAX_VALUE;
        var visited = new HashSet<String>();
        visited.add(current);
        boolean looped = false;
        for (Optional<DnsRecord> alias = aliasOf(records, current); alias.isPresent(); alias = aliasOf(records, current)) {
            ttl = Math.min(ttl, alias.get().cacheSeconds());
            current = DomainPattern.normalize(((DnsRecord.Cname) alias.get().data()).target());
            if (!visited.add(current)) {
                looped = true;
                break;
            }
        }
        String end = current;
        List<DnsRecord> addressRecords = looped ? List.of() : records.stream()
                .filter(r -> r.data() instanceof DnsRecord.A && DomainPattern.normalize(r.name()).equals(end)).toList();
        for (DnsRecord r : addressRecords) ttl = Math.min(ttl, r.cacheSeconds());
        List<InetAddress> addresses = addressRecords.stream().map(r -> (InetAddress) ((DnsRecord.A) r.data()).address()).distinct().toList();
        List<String> targets = records.stream().map(DnsRecord::data).filter(DnsRecord.Cname.class::isInstance)
                .map(c -> DomainPattern.normalize(((DnsRecord.Cname) c).target())).distinct().toList();
        return new UpstreamAnswer(addresses, addresses.isEmpty() ? Duration.ZERO : Duration.ofSeconds(ttl), targets);
    }

    private static Optional<DnsRecord> aliasOf(List<DnsRecord> records, String name) {
        return records.stream().filter(r -> r.data() instanceof DnsRecord.Cname && DomainPattern.normalize(r.name()).equals(name)).findFirst();
    }
}
