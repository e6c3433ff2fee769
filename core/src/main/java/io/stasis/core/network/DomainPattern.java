package io.stasis.core.network;

import io.stasis.core.error.StasisException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A domain in an egress rule: {@code example.com} matches that name only, {@code *.example.com}
 * matches every name below it (not {@code example.com} itself). Lowercase, without a trailing dot.
 */
public record DomainPattern(String pattern) {
    private static final Pattern LABEL = Pattern.compile("[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?");

    public DomainPattern {
        if (!isValid(pattern)) throw new IllegalArgumentException("not a domain pattern: " + pattern);
    }

    public static DomainPattern parse(String text, String field) {
        String normalized = normalize(text);
        if (!isValid(normalized))
            throw StasisException.invalid(field, "'" + text + "' is neither a domain (example.com, *.example.com) nor an IP address or CIDR network");
        return new DomainPattern(normalized);
    }

    /** The form names are compared in: lowercase, no trailing dot. */
    public static String normalize(String name) {
        String lower = name.toLowerCase(Locale.ROOT);
        return lower.endsWith(".") ? lower.substring(0, lower.length() - 1) : lower;
    }

    public boolean wildcard() {
        return pattern.startsWith("*.");
    }

    public boolean matches(String name) {
        String n = normalize(name);
        if (!wildcard()) return n.equals(pattern);
        return n.endsWith(pattern.substring(1)) && n.length() > pattern.length() - 1;
    }

    private static boolean isValid(String text) {
        if (text == null || text.isEmpty() || text.length() > 253) return false;
        String rest = text.startsWith("*.") ? text.substring(2) : text;
        String[] labels = rest.split("\\.", -1);
        if (labels.length < 1) return false;
        for (String label : labels) if (!LABEL.matcher(label).matches()) return false;
        return true;
    }

    @Override
    public String toString() {
        return pattern;
    }
}
