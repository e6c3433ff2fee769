package io.stasis.http1;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The header fields of one HTTP/1.x head, in order, names compared without case. Mutable (a proxy
 * rewrites a head before it forwards it) and not thread-safe. {@link #toString()} names the fields
 * without their values, which may be secrets.
 */
public final class HttpHeaders {
    private record Field(String name, String value) {
    }

    private final List<Field> fields = new ArrayList<>();

    public HttpHeaders add(String name, String value) {
        fields.add(new Field(name, value));
        return this;
    }

    /** The first value of {@code name}. */
    public Optional<String> first(String name) {
        for (var f : fields) if (f.name.equalsIgnoreCase(name)) return Optional.of(f.value);
        return Optional.empty();
    }

    /** Every value of {@code name}, in order. */
    public List<String> all(String name) {
        var out = new ArrayList<String>();
        for (var f : fields) if (f.name.equalsIgnoreCase(name)) out.add(f.value);
        return out;
    }

    public boolean has(String name) {
        return first(name).isPresent();
    }

    public HttpHeaders remove(String name) {
        fields.removeIf(f -> f.name.equalsIgnoreCase(name));
        return this;
    }

    /** Replaces every field of {@code name} with one, at the end. */
    public HttpHeaders set(String name, String value) {
        return remove(name).add(name, value);
    }

    /** Whether a comma-separated field ({@code Connection}, {@code Transfer-Encoding}) lists {@code token}, without case. */
    public boolean hasToken(String name, String token) {
        return tokens(name).contains(token.toLowerCase(Locale.ROOT));
    }

    /** Every comma-separated element of every field of {@code name}, trimmed and in lowercase; empty elements left out. */
    public List<String> tokens(String name) {
        var out = new ArrayList<String>();
        for (String value : all(name)) {
            for (String part : value.split(",")) {
                String t = part.strip().toLowerCase(Locale.ROOT);
                if (!t.isEmpty()) out.add(t);
            }
        }
        return out;
    }

    public int size() {
        return fields.size();
    }

    /** The fields as they go on the wire, each {@code name: value} and CRLF. */
    public void appendTo(StringBuilder out) {
        for (var f : fields) out.append(f.name).append(": ").append(f.value).append("\r\n");
    }

    /** The names only: values can be credentials, and this is what ends up in logs. */
    @Override
    public String toString() {
        return fields.stream().map(Field::name).toList().toString();
    }
}
