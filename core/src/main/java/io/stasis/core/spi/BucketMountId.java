package io.stasis.core.spi;

import io.stasis.core.error.StasisException;
import java.util.regex.Pattern;

/**
 * Names one bucket mount on the host, and so its directory: {@code <mounts-dir>/<id>}. Whoever
 * mounts chooses it, e.g. the sandbox id and the mount's index ({@code sbx_k3j9x2-0}), so that
 * after a crash {@link BucketMounts#listOwned()} tells whose mount a leftover was.
 *
 * @param value 1 to 64 letters, digits, {@code _} or {@code -}: a file name on every filesystem, with
 *              no dot, slash or space
 */
public record BucketMountId(String value) {
    private static final Pattern VALID = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    public BucketMountId {
        if (value == null || !VALID.matcher(value).matches())
            throw StasisException.invalid("mounts.id", "must be 1 to 64 letters, digits, '_' or '-', was '" + value + "'");
    }

    /** Whether {@code name} (e.g. a directory found on disk) is a valid id. */
    public static boolean isValid(String name) {
        return name != null && VALID.matcher(name).matches();
    }

    @Override
    public String toString() {
        return value;
    }
}
