package io.stasis.server;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The preview listener's part of the service's settings. It listens on the API's bind address.
 *
 * @param port   the preview listener's port (default 7071, next to the API's 7070; 0 picks a free one)
 * @param domain the domain of host-based preview URLs ({@code http://3000-sbx-abc.DOMAIN:PORT/});
 *               the default {@code localhost} works in browsers without DNS, since every
 *               {@code *.localhost} name is the loopback. Elsewhere: a wildcard DNS record for it.
 */
public record PreviewSettings(int port, String domain) {
    public static final int DEFAULT_PORT = 7071;
    private static final Pattern DOMAIN = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*");

    public PreviewSettings {
        if (port < 0 || port > 65535) throw new IllegalArgumentException("preview port must be 0-65535, was " + port);
        if (domain.length() > 200 || !DOMAIN.matcher(domain).matches())
            throw new IllegalArgumentException("preview domain must be a lowercase DNS name such as localhost or preview.example.com, was '" + domain + "'");
    }

    public static PreviewSettings defaults() {
        return new PreviewSettings(DEFAULT_PORT, "localhost");
    }

    /** Applies one {@code --preview-…} flag; empty if the flag is not one of these. */
    Optional<PreviewSettings> with(String flag, String value) {
        try {
            return Optional.ofNullable(switch (flag) {
                case "--preview-port" -> new PreviewSettings(Integer.parseInt(value), domain);
                case "--preview-domain" -> new PreviewSettings(port, value);
                default -> null;
            });
        } catch (IllegalArgumentException e) {
            throw new ServerConfig.UsageException(flag + ": " + e.getMessage());
        }
    }

    static final String USAGE = """
              --preview-port N         port of the preview listener (default 7071; 0 picks a free port)
              --preview-domain D       domain of preview URLs http://PORT-SANDBOX.D:N/ (default localhost)
            """;
}
