package io.stasis.templates.oci;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Objects;

/** A user name and password (or token) for a registry. {@link #toString()} never shows the password. */
public record RegistryCredentials(String username, String password) {
    public RegistryCredentials {
        Objects.requireNonNull(username);
        Objects.requireNonNull(password);
        if (username.contains(":")) throw new IllegalArgumentException("a registry user name cannot contain ':'");
    }

    /** The value of an {@code Authorization} header for HTTP Basic authentication. */
    String basicAuthorization() {
        return "Basic " + Base64.getEncoder().encodeToString((username + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return "RegistryCredentials[username=" + username + ", password=***]";
    }
}
