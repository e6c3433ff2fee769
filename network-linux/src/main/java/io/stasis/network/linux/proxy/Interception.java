package io.stasis.network.linux.proxy;

import io.stasis.network.linux.SecretHeaders;
import io.stasis.network.linux.tls.SandboxAuthorities;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * What the proxy needs to intercept TLS for header rules: the rules, the sandboxes' CAs (towards
 * the sandbox) and the client context for upstream servers (see {@code UpstreamTls}).
 */
public record Interception(SecretHeaders headers, SandboxAuthorities authorities, SSLContext upstream) {
    public Interception {
        Objects.requireNonNull(headers);
        Objects.requireNonNull(authorities);
        Objects.requireNonNull(upstream);
    }
}
