package io.stasis.network.linux;

import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.secret.SecretInjection;
import java.util.Optional;

/**
 * What the egress proxy asks before carrying an allowed TLS connection: does the sandbox's policy
 * have a header rule for the name it presented, and with which values (secrets filled in). Empty:
 * the connection passes through uninspected. Called once per connection, on its own thread.
 */
@FunctionalInterface
public interface SecretHeaders {
    Optional<SecretInjection.Resolved> headersFor(SandboxId sandbox, String name);
}
