package io.stasis.core.sandbox;

import io.stasis.core.error.StasisException;
import java.util.Map;
import java.util.regex.Pattern;

/** Validation of environment variables and metadata maps that arrive from callers. */
public final class EnvVars {
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,255}");
    private static final Pattern METADATA_KEY = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._/-]{0,62}");
    private static final int MAX_VALUE = 32 * 1024;
    private static final int MAX_METADATA_VALUE = 1024;

    private EnvVars() {
    }

    public static Map<String, String> validateEnv(String field, Map<String, String> env) {
        if (env.size() > 1000) throw StasisException.invalid(field, "at most 1000 variables");
        env.forEach((k, v) -> {
            if (!ENV_NAME.matcher(k).matches())
                throw StasisException.invalid(field, "'" + k + "' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)");
            if (v == null) throw StasisException.invalid(field + "." + k, "must be a string");
            if (v.indexOf('\0') >= 0) throw StasisException.invalid(field + "." + k, "must not contain NUL");
            if (v.length() > MAX_VALUE) throw StasisException.invalid(field + "." + k, "longer than " + MAX_VALUE + " characters");
        });
        return env;
    }

    public static Map<String, String> validateMetadata(Map<String, String> metadata) {
        if (metadata.size() > 64) throw StasisException.invalid("metadata", "at most 64 entries");
        metadata.forEach((k, v) -> {
            if (!METADATA_KEY.matcher(k).matches())
                throw StasisException.invalid("metadata", "key '" + k + "' must be 1-63 characters of A-Z, a-z, 0-9, '.', '_', '/', '-'");
            if (v == null || v.length() > MAX_METADATA_VALUE)
                throw StasisException.invalid("metadata." + k, "must be a string of at most " + MAX_METADATA_VALUE + " characters");
        });
        return metadata;
    }
}
