package io.stasis.sdk;

import java.util.Objects;

/** A volume mounted into a new sandbox: the volume's id or name, the absolute path inside, read-only or not. */
public record VolumeMount(String volume, String path, boolean readOnly) {
    public VolumeMount {
        Objects.requireNonNull(volume, "volume");
        Objects.requireNonNull(path, "path");
    }

    /** Parses the CLI's {@code NAME:/path[:ro]}. */
    public static VolumeMount parse(String spec) {
        String[] parts = spec.split(":");
        if (parts.length < 2 || parts.length > 3 || parts[0].isEmpty() || !parts[1].startsWith("/")
                || parts.length == 3 && !parts[2].equals("ro") && !parts[2].equals("rw"))
            throw new IllegalArgumentException("a volume mount is NAME:/path or NAME:/path:ro, was '" + spec + "'");
        return new VolumeMount(parts[0], parts[1], parts.length == 3 && parts[2].equals("ro"));
    }
}
