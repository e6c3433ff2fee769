package io.stasis.core.volume;

import io.stasis.core.sandbox.Ids;
import java.util.Objects;
import java.util.regex.Pattern;

/** A volume sync's id: {@code vsync_} and 16 lowercase letters or digits. Safe in paths and blob keys. */
public record VolumeSyncId(String value) implements Comparable<VolumeSyncId> {
    public static final String PREFIX = "vsync_";
    private static final Pattern SHAPE = Pattern.compile("vsync_[0-9a-z]{" + Ids.SUFFIX_LENGTH + "}");

    public VolumeSyncId {
        Objects.requireNonNull(value, "value");
        if (!isValid(value)) throw new IllegalArgumentException("not a vsync id: " + value);
    }

    public static VolumeSyncId random() {
        return new VolumeSyncId(PREFIX + Ids.randomSuffix());
    }

    public static boolean isValid(String s) {
        return s != null && SHAPE.matcher(s).matches();
    }

    @Override
    public int compareTo(VolumeSyncId o) {
        return value.compareTo(o.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
