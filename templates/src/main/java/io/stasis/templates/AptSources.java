package io.stasis.templates;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Finds the Debian mirror the host's apt already uses for a suite, so no mirror host is ever
 * named in code: the first {@code deb} source whose suites include the suite, from the deb822
 * file {@code /etc/apt/sources.list.d/debian.sources}, else the one-line
 * {@code /etc/apt/sources.list}.
 */
final class AptSources {
    static final Path DEB822 = Path.of("/etc/apt/sources.list.d/debian.sources");
    static final Path ONE_LINE = Path.of("/etc/apt/sources.list");

    private final Path deb822;
    private final Path oneLine;

    AptSources(Path deb822, Path oneLine) {
        this.deb822 = deb822;
        this.oneLine = oneLine;
    }

    static AptSources system() {
        return new AptSources(DEB822, ONE_LINE);
    }

    /** The mirror URI for {@code suite}, e.g. {@code http://host/debian}, without a trailing slash. */
    Optional<String> mirrorFor(String suite) {
        return read(deb822).flatMap(text -> fromDeb822(text, suite))
                .or(() -> read(oneLine).flatMap(text -> fromOneLine(text, suite)));
    }

    /** The hosts of every {@code deb} source, in both files (the mirror, its security and update suites). */
    List<String> hosts() {
        var hosts = new java.util.LinkedHashSet<String>();
        read(deb822).ifPresent(text -> {
            for (Map<String, String> stanza : stanzas(text))
                if (!stanza.getOrDefault("enabled", "yes").equalsIgnoreCase("no") && words(stanza.get("types")).contains("deb"))
                    words(stanza.get("uris")).forEach(uri -> hostOf(uri).ifPresent(hosts::add));
        });
        read(oneLine).ifPresent(text -> {
            for (String raw : text.split("\n")) {
                var fields = words(raw.contains("#") ? raw.substring(0, raw.indexOf('#')) : raw);
                if (fields.isEmpty() || !fields.getFirst().equals("deb")) continue;
                fields.stream().skip(1).filter(f -> f.contains("://")).findFirst().flatMap(AptSources::hostOf).ifPresent(hosts::add);
            }
        });
        return List.copyOf(hosts);
    }

    private static Optional<String> hostOf(String uri) {
        try {
            return Optional.ofNullable(java.net.URI.create(uri).getHost());
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** Describes where it looked, for error messages. */
    String searched() {
        return deb822 + " and " + oneLine;
    }

    /** deb822 format (sources.list(5)): stanzas separated by blank lines; fields may continue on indented lines. */
    static Optional<String> fromDeb822(String text, String suite) {
        for (Map<String, String> stanza : stanzas(text)) {
            if (stanza.getOrDefault("enabled", "yes").equalsIgnoreCase("no")) continue;
            if (!words(stanza.get("types")).contains("deb")) continue;
            if (!words(stanza.get("suites")).contains(suite)) continue;
            var uris = words(stanza.get("uris"));
            if (!uris.isEmpty()) return Optional.of(trimSlash(uris.getFirst()));
        }
        return Optional.empty();
    }

    /** One-line format: {@code deb [options] uri suite component...}; comments start with '#'. */
    static Optional<String> fromOneLine(String text, String suite) {
        for (String raw : text.split("\n")) {
            String line = raw.contains("#") ? raw.substring(0, raw.indexOf('#')) : raw;
            line = line.strip();
            if (!line.startsWith("deb ") && !line.startsWith("deb\t")) continue;
            line = line.substring(3).strip();
            if (line.startsWith("[")) { // options such as [arch=amd64 signed-by=...]
                int end = line.indexOf(']');
                if (end < 0) continue;
                line = line.substring(end + 1).strip();
            }
            var fields = words(line);
            if (fields.size() >= 2 && fields.get(1).equals(suite)) return Optional.of(trimSlash(fields.getFirst()));
        }
        return Optional.empty();
    }

    private static List<Map<String, String>> stanzas(String text) {
        var stanzas = new ArrayList<Map<String, String>>();
        var current = new LinkedHashMap<String, String>();
        String lastKey = null;
        for (String line : text.split("\n")) {
            if (line.startsWith("#")) continue;
            if (line.isBlank()) {
                if (!current.isEmpty()) stanzas.add(current);
                current = new LinkedHashMap<>();
                lastKey = null;
            } else if ((line.startsWith(" ") || line.startsWith("\t")) && lastKey != null) {
                current.merge(lastKey, " " + line.strip(), String::concat);
            } else {
                int colon = line.indexOf(':');
                if (colon <= 0) continue;
                lastKey = line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
                current.put(lastKey, line.substring(colon + 1).strip());
            }
        }
        if (!current.isEmpty()) stanzas.add(current);
        return stanzas;
    }

    private static List<String> words(String value) {
        if (value == null || value.isBlank()) return List.of();
        return List.of(value.strip().split("\\s+"));
    }

    private static String trimSlash(String uri) {
        return uri.endsWith("/") ? uri.substring(0, uri.length() - 1) : uri;
    }

    private static Optional<String> read(Path file) {
        try {
            return Files.isRegularFile(file) ? Optional.of(Files.readString(file)) : Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
