package io.stasis.core.volume;

import io.stasis.core.tenant.TenantId;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A volume as the catalog records it: a directory tree with a size limit that belongs to a tenant
 * and outlives every sandbox that mounts it.
 *
 * @param origin where its first content came from: a snapshot id, a sync id, or empty for an empty volume
 */
public record Volume(VolumeId id, TenantId tenant, String name, long sizeMb, Instant createdAt, Optional<String> origin) {
    public Volume {
        Objects.requireNonNull(id);
        Objects.requireNonNull(tenant);
        Objects.requireNonNull(name);
        Objects.requireNonNull(createdAt);
        Objects.requireNonNull(origin);
    }

    public long sizeBytes() {
        return sizeMb << 20;
    }
}
