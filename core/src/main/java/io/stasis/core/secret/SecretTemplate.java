package io.stasis.core.secret;

import io.stasis.core.error.StasisException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A header value that may name secrets: {@code Bearer {{secret:API_TOKEN}}}. Any other {@code {{}
 * is refused, so that a typo ({@code {{secrets:X}}}, {@code {{secret:X}}) cannot pass as literal
 * text. Literal parts may not hold CR, LF or NUL (they would split the header).
 */
public final class SecretTemplate {
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{\\{secret:([A-Za-z_][A-Za-z0-9_]{0,63})}}");
    public static final int MAX_LENGTH = 8 * 1024;

    private sealed interface Part permits Literal, Ref {
    }

    private record Literal(String text) implements Part {
    }

    private record Ref(String name) implements Part {
    }

    private final String text;
    private final List<Part> parts;

    private SecretTemplate(String text, List<Part> parts) {
        this.text = text;
        this.parts = List.copyOf(parts);
    }

    /** @throws StasisException {@code invalid_request} naming {@code field} */
    public static SecretTemplate parse(String text, String field) {
        if (text.length() > MAX_LENGTH) throw StasisException.invalid(field, "is longer than " + MAX_LENGTH + " characters");
        var parts = new ArrayList<Part>();
        var m = PLACEHOLDER.matcher(text);
        int at = 0;
        while (m.find()) {
            if (m.start() > at) parts.add(literal(text.substring(at, m.start()), field));
            parts.add(new Ref(m.group(1)));
            at = m.end();
        }
        if (at < text.length()) parts.add(literal(text.substring(at), field));
        return new SecretTemplate(text, parts);
    }

    private static Literal literal(String s, String field) {
        if (s.contains("{{"))
            throw StasisException.invalid(field, "'{{' must start a placeholder {{secret:NAME}} (NAME: letters, digits, underscores, "
                    + "not starting with a digit, at most 64)");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\r' || c == '\n' || c == 0) throw StasisException.invalid(field, "may not contain CR, LF or NUL");
        }
        return new Literal(s);
    }

    /** The text as given. */
    public String text() {
        return text;
    }

    /** The secrets it names, in order of first appearance. */
    public Set<String> secretNames() {
        var out = new LinkedHashSet<String>();
        for (Part p : parts) if (p instanceof Ref r) out.add(r.name());
        return out;
    }

    /** The value with every placeholder replaced; empty if a named secret is not in {@code values}. */
    public Optional<String> expand(Map<String, String> values) {
        var out = new StringBuilder();
        for (Part p : parts) {
            switch (p) {
                case Literal l -> out.append(l.text());
                case Ref r -> {
                    String v = values.get(r.name());
                    if (v == null) return Optional.empty();
                    out.append(v);
                }
            }
        }
        return Optional.of(out.toString());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SecretTemplate t && t.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    /** The text as given: placeholders only name secrets, never hold their values. */
    @Override
    public String toString() {
        return text;
    }
}
