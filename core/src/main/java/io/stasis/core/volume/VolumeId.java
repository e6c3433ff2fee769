package io.stasis.core.volume;

import io.stasis.core.sandbox.Ids;
import java.util.Objects;
import java.util.regex.Pattern;

/** A volume's id: {@code vol_} and 16 lowercase letters or digits. Safe in paths and blob keys. */
public record VolumeId(String value) implements Comparable<VolumeId> {
    public static final String PREFIX = "vol_";
    private static final Pattern SHAPE = Pattern.compile("vol_[0-9a-z]{" + Ids.SUFFIX_LENGTH + "}");

    public VolumeId {
        Objects.requireNonNull(value, "value");
        if (!isValid(value)) throw new IllegalArgumentException("not a vol id: " + value);
    }

    public static VolumeId random() {
        return new VolumeId(PREFIX + Ids.randomSuffix());
    }

    public static boolean isValid(String s) {
        return s != null && SHAPE.matcher(s).matches();
    }

    @Override
    public int compareTo(VolumeId o) {
        return value.compareTo(o.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
