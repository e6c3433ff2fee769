package io.stasis.core.checkpoint;

import io.stasis.core.sandbox.Ids;
import java.util.Objects;
import java.util.regex.Pattern;

/** A checkpoint's id: {@code ckpt_} and 16 lowercase letters or digits. Safe in paths. */
public record CheckpointId(String value) implements Comparable<CheckpointId> {
    public static final String PREFIX = "ckpt_";
    private static final Pattern SHAPE = Pattern.compile("ckpt_[0-9a-z]{" + Ids.SUFFIX_LENGTH + "}");

    public CheckpointId {
        Objects.requireNonNull(value, "value");
        if (!isValid(value)) throw new IllegalArgumentException("not a checkpoint id: " + value);
    }

    public static CheckpointId random() {
        return new CheckpointId(PREFIX + Ids.randomSuffix());
    }

    public static boolean isValid(String s) {
        return s != null && SHAPE.matcher(s).matches();
    }

    @Override
    public int compareTo(CheckpointId o) {
        return value.compareTo(o.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
