package io.stasis.core.volume;

import io.stasis.core.sandbox.Ids;
import java.util.Objects;
import java.util.regex.Pattern;

/** A volume snapshot's id: {@code vsnap_} and 16 lowercase letters or digits. Safe in paths and blob keys. */
public record VolumeSnapshotId(String value) implements Comparable<VolumeSnapshotId> {
    public static final String PREFIX = "vsnap_";
    private static final Pattern SHAPE = Pattern.compile("vsnap_[0-9a-z]{" + Ids.SUFFIX_LENGTH + "}");

    public VolumeSnapshotId {
        Objects.requireNonNull(value, "value");
        if (!isValid(value)) throw new IllegalArgumentException("not a vsnap id: " + value);
    }

    public static VolumeSnapshotId random() {
        return new VolumeSnapshotId(PREFIX + Ids.randomSuffix());
    }

    public static boolean isValid(String s) {
        return s != null && SHAPE.matcher(s).matches();
    }

    @Override
    public int compareTo(VolumeSnapshotId o) {
        return value.compareTo(o.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
