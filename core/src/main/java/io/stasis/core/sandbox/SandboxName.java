package io.stasis.core.sandbox;

import io.stasis.core.error.StasisException;
import java.util.regex.Pattern;

/** Rules for the optional unique name a sandbox can be addressed by instead of its id. */
public final class SandboxName {
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9._-]{0,62}");

    private SandboxName() {
    }

    /** Returns the name if valid, or throws {@code invalid_request} saying why. */
    public static String validate(String name) {
        if (!NAME.matcher(name).matches())
            throw StasisException.invalid("name", "must be 1-63 characters of a-z, 0-9, '.', '_', '-', starting with a letter or digit, was '" + name + "'");
        if (name.startsWith(SandboxId.PREFIX))
            throw StasisException.invalid("name", "must not start with '" + SandboxId.PREFIX + "' (reserved for ids)");
        return name;
    }
}
