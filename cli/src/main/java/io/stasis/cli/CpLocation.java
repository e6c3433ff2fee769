package io.stasis.cli;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One side of {@code stasis cp}: {@code ID:/path} in a sandbox, anything else on this machine.
 * A local path containing a colon needs a slash before it ({@code ./a:b}).
 */
sealed interface CpLocation permits CpLocation.Local, CpLocation.Remote {
    /** Sandbox ids ({@code sbx_...}) and names ({@code a-z 0-9 . _ -}), then a colon. */
    Pattern REMOTE = Pattern.compile("([A-Za-z0-9][A-Za-z0-9._-]*):(.*)", Pattern.DOTALL);

    record Local(Path path) implements CpLocation {
    }

    /** @param path the path inside the sandbox; {@code /} when the spec had none ({@code ID:}) */
    record Remote(String sandbox, String path) implements CpLocation {
        /** The last element of the path, or "" for the root. */
        String baseName() {
            String trimmed = path;
            while (trimmed.length() > 1 && trimmed.endsWith("/")) trimmed = trimmed.substring(0, trimmed.length() - 1);
            int slash = trimmed.lastIndexOf('/');
            String name = slash < 0 ? trimmed : trimmed.substring(slash + 1);
            return name.equals(".") || name.equals("..") ? "" : name;
        }

        /** {@code child} inside this path taken as a directory. */
        String child(String child) {
            return (path.endsWith("/") ? path : path + "/") + child;
        }
    }

    static CpLocation parse(String spec) {
        if (spec == null || spec.isEmpty()) throw new IllegalArgumentException("an empty path");
        Matcher m = REMOTE.matcher(spec);
        if (m.matches()) {
            String path = m.group(2);
            return new Remote(m.group(1), path.isEmpty() ? "/" : path);
        }
        return new Local(Path.of(spec));
    }
}
