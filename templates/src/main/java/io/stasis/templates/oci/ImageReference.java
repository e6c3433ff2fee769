package io.stasis.templates.oci;

import java.net.URI;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An image in a registry: {@code [oci://]REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]}, e.g.
 * {@code oci://127.0.0.1:5000/team/app:1.2} or {@code docker.io/library/debian@sha256:...}. The
 * registry is always named (a host with a dot or a port, {@code localhost}, or an IP address):
 * there is no default registry. Without tag or digest the tag is {@code latest}; with a digest the
 * tag is only informative and the digest is what is pulled (and verified).
 */
public record ImageReference(String registry, String repository, Optional<String> tag, Optional<Digest> digest) {
    private static final Pattern REGISTRY = Pattern.compile("(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*"
            + "|\\[[0-9a-fA-F:.]+\\])(?::[0-9]{1,5})?");
    private static final Pattern COMPONENT = Pattern.compile("[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*");
    private static final Pattern TAG = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}");
    private static final Pattern SHAPE = Pattern.compile("([^/]+)/([^:@]+)(?::([^@]+))?(?:@(.+))?");
    private static final int MAX_REPOSITORY = 255;

    public ImageReference {
        Objects.requireNonNull(registry);
        Objects.requireNonNull(repository);
        Objects.requireNonNull(tag);
        Objects.requireNonNull(digest);
    }

    /** Parses a reference as a caller wrote it; a wrong one is an {@link ImageException} ({@code malformed}) saying what is wrong. */
    public static ImageReference parse(String text) {
        String subject = "image reference '" + (text == null ? "null" : text.length() > 300 ? text.substring(0, 300) + "..." : text) + "'";
        if (text == null || text.isBlank()) throw ImageException.malformed(subject, "empty");
        String rest = text.startsWith("oci://") ? text.substring("oci://".length()) : text;
        Matcher m = SHAPE.matcher(rest);
        if (!m.matches()) throw ImageException.malformed(subject, "not REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]");
        String registry = m.group(1);
        if (!REGISTRY.matcher(registry).matches())
            throw ImageException.malformed(subject, "'" + registry + "' is not a registry host[:port]");
        if (!registry.contains(".") && !registry.contains(":") && !registry.equals("localhost"))
            throw ImageException.malformed(subject, "name the registry first, e.g. docker.io/library/" + registry
                    + " ('" + registry + "' is no host: it has no dot or port)");
        String repository = m.group(2);
        if (repository.length() > MAX_REPOSITORY) throw ImageException.malformed(subject, "the repository is longer than " + MAX_REPOSITORY);
        for (String c : repository.split("/", -1))
            if (!COMPONENT.matcher(c).matches())
                throw ImageException.malformed(subject, "'" + c + "' is not a repository path component (lowercase letters, digits, . _ -)");
        Optional<String> tag = Optional.ofNullable(m.group(3));
        if (tag.isPresent() && !TAG.matcher(tag.get()).matches()) throw ImageException.malformed(subject, "'" + tag.get() + "' is not a tag");
        Optional<Digest> digest = Optional.ofNullable(m.group(4)).map(d -> Digest.parse(d, subject));
        return new ImageReference(registry, repository, tag, digest);
    }

    /** What {@code /v2/<repository>/manifests/<reference>} takes: the digest if any, else the tag, else {@code latest}. */
    public String reference() {
        return digest.map(Digest::toString).orElse(tag.orElse("latest"));
    }

    /** Whether the registry is this machine ({@code localhost}, {@code 127.x.x.x}, {@code [::1]}): plain http is allowed there. */
    public boolean isLoopback() {
        String host = host();
        return host.equals("localhost") || host.matches("127\\.[0-9]+\\.[0-9]+\\.[0-9]+") || host.equals("[::1]");
    }

    /** The registry's host, without the port. */
    public String host() {
        return registry.startsWith("[") ? registry.substring(0, registry.indexOf(']') + 1)
                : registry.contains(":") ? registry.substring(0, registry.indexOf(':')) : registry;
    }

    /**
     * Where the registry's API is: https, or http for a loopback registry or when {@code insecure}.
     * {@code docker.io} is served by {@code registry-1.docker.io}.
     */
    public URI apiBase(boolean insecure) {
        String scheme = isLoopback() || insecure ? "http" : "https";
        String authority = registry.equals("docker.io") || registry.equals("index.docker.io") ? "registry-1.docker.io" : registry;
        return URI.create(scheme + "://" + authority);
    }

    @Override
    public String toString() {
        return "oci://" + registry + "/" + repository + tag.map(t -> ":" + t).orElse("") + digest.map(d -> "@" + d).orElse("");
    }
}
