package io.stasis.core.sandbox;

import java.util.Objects;

/** A sandbox's id: {@code sbx_} and 16 lowercase letters or digits. Safe in paths and runc ids. */
public record SandboxId(String value) implements Comparable<SandboxId> {
    public static final String PREFIX = "sbx_";

    public SandboxId {
        Objects.requireNonNull(value, "value");
        if (!isValid(value)) throw new IllegalArgumentException("not a sandbox id: " + value);
    }

    public static SandboxId random() {
        return new SandboxId(PREFIX + Ids.randomSuffix());
    }

    public static boolean isValid(String s) {
        return s != null && s.startsWith(PREFIX) && Ids.isSuffix(s.substring(PREFIX.length()));
    }

    /** The hostname inside the sandbox: the id with a hyphen, as hostnames may not hold underscores (RFC 1123). */
    public String hostname() {
        return "sbx-" + value.substring(PREFIX.length());
    }

    @Override
    public int compareTo(SandboxId o) {
        return value.compareTo(o.value);
    }

    @Override
    public String toString() {
        return value;
    }
}
