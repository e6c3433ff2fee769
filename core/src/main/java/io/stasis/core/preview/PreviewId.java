package io.stasis.core.preview;

import io.stasis.core.sandbox.Ids;
import java.util.Objects;
import java.util.regex.Pattern;

/** A preview's id: {@code prv_} and 16 lowercase letters or digits. */
public record PreviewId(String value) implements Comparable<PreviewId> {
    public static final String PREFIX = "prv_";
    private static final Pattern SHAPE = Pattern.compile("prv_[0-9a-z]{" + Ids.SUFFIX_LENGTH + "}");

    public PreviewId {
        Objects.requireNonNull(value, "value");
        if (!isValid(value)) throw new IllegalArgumentException("not a preview id: " + value);
    }

    public static PreviewId random() {
        return new PreviewId(PREFIX + Ids.randomSuffix());
    }

    public static boolean isValid(String s) {
        return s != null && SHAPE.matcher(s).matches();
    }

    @Override
    public int compareTo(PreviewId o) {
        return value.compareTo(o.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
