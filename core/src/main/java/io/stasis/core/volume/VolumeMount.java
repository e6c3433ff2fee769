package io.stasis.core.volume;

import java.util.Objects;

/** A volume mounted into a sandbox at {@code path} (absolute, normalized), read-write unless {@code readOnly}. */
public record VolumeMount(VolumeId volume, String path, boolean readOnly) {
    public VolumeMount {
        Objects.requireNonNull(volume);
        Objects.requireNonNull(path);
    }
}
