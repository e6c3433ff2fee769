package io.stasis.server.preview;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** The header fields of one HTTP/1.1 head, in order, names compared without case. Not thread-safe. */
final class HttpHeaders {
    private record Field(String name, String value) {
    }

    private final List<Field> fields = new ArrayList<>();

    HttpHeaders add(String name, String value) {
        fields.add(new Field(name, value));
        return this;
    }

    /** The first value of {@code name}. */
    Optional<String> first(String name) {
        for (var f : fields) if (f.name.equalsIgnoreCase(name)) return Optional.of(f.value);
        return Optional.empty();
    }

    List<String> all(String name) {
        var out = new ArrayList<String>();
        for (var f : fields) if (f.name.equalsIgnoreCase(name)) out.add(f.value);
        return out;
    }

    boolean has(String name) {
        return first(name).isPresent();
    }

    HttpHeaders remove(String name) {
        fields.removeIf(f -> f.name.equalsIgnoreCase(name));
        return this;
    }

    /** Replaces every field of {@code name} with one. */
    HttpHeaders set(String name, String value) {
        return remove(name).add(name, value);
    }

    /** Whether a comma-separated field ({@code Connection}, {@code Transfer-Encoding}) lists {@code token}, without case. */
    boolean hasToken(String name, String token) {
        return tokens(name).contains(token.toLowerCase(Locale.ROOT));
    }

    /** Every comma-separated element of every field of {@code name}, trimmed and in lowercase. */
    List<String> tokens(String name) {
        var out = new ArrayList<String>();
        for (String value : all(name)) {
            for (String part : value.split(",")) {
                String t = part.strip().toLowerCase(Locale.ROOT);
                if (!t.isEmpty()) out.add(t);
            }
        }
        return out;
    }

    void appendTo(StringBuilder out) {
        for (var f : fields) out.append(f.name).append(": ").append(f.value).append("\r\n");
    }
}
