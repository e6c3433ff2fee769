package io.stasis.network.linux.proxy;

import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Names as clients present them, brought into the form the policy compares (that of
 * {@code DomainPattern.normalize}: lowercase, no trailing dot). Anything but plain LDH labels (plus
 * {@code _}) is refused rather than cleaned: a name the proxy would clean up is one an upstream
 * server might read differently.
 */
final class HostNames {
    private static final Pattern LABEL = Pattern.compile("[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?");
    private static final Pattern NUMERIC = Pattern.compile("[0-9]+");

    private HostNames() {
    }

    /**
     * A DNS name, or empty for something that names an address instead (an IPv4 literal, whose last
     * label is numeric like no real top-level domain).
     *
     * @param malformed builds the exception for anything else, from a detail for the log
     */
    static Optional<String> normalize(String raw, Function<String, MalformedHeadException> malformed) throws MalformedHeadException {
        if (raw.isEmpty() || raw.length() > 254) throw malformed.apply("name of " + raw.length() + " characters");
        String lower = raw.toLowerCase(Locale.ROOT);
        String name = lower.endsWith(".") ? lower.substring(0, lower.length() - 1) : lower;
        if (name.isEmpty()) throw malformed.apply("name is only a dot");
        String[] labels = name.split("\\.", -1);
        for (String label : labels) if (!LABEL.matcher(label).matches()) throw malformed.apply("not a host name: " + printable(raw));
        if (NUMERIC.matcher(labels[labels.length - 1]).matches()) return Optional.empty();
        return Optional.of(name);
    }

    /** True for the characters a bracketed IPv6 literal ({@code [v6]}) may hold. */
    static boolean isIpv6Literal(String inside) {
        if (inside.isEmpty() || inside.indexOf(':') < 0) return false;
        for (int i = 0; i < inside.length(); i++) {
            char c = inside.charAt(i);
            boolean ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
            if (!ok) return false;
        }
        return true;
    }

    /** {@code text} safe to log: at most 80 characters, control and non-ASCII characters as {@code ?}. */
    static String printable(String text) {
        var out = new StringBuilder();
        for (int i = 0; i < Math.min(text.length(), 80); i++) {
            char c = text.charAt(i);
            out.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return text.length() > 80 ? out.append("...").toString() : out.toString();
    }
}
