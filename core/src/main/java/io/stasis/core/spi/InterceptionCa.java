package io.stasis.core.spi;

import io.stasis.core.sandbox.SandboxId;
import java.util.Optional;

/**
 * The certificate authority with which the egress proxy intercepts a sandbox's TLS connections to
 * domains that have header rules. One per sandbox lineage: a fork restored from memory inherits its
 * parent's (its processes may already trust that one); any other sandbox gets a fresh one. The
 * private key stays on the host; only the certificate is installed into the sandbox.
 */
public interface InterceptionCa {

    /**
     * The sandbox's CA certificate (PEM), created on first use, or copied from {@code inheritFrom}'s
     * if that sandbox has one. Idempotent.
     */
    String certificatePem(SandboxId sandbox, Optional<SandboxId> inheritFrom);

    /** Forgets the sandbox's CA (its key is deleted). Idempotent. */
    void forget(SandboxId sandbox);
}
