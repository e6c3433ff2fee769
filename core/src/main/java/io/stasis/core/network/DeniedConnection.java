package io.stasis.core.network;

import java.util.Optional;

/**
 * An attempt to reach something the policy refused, as the DNS resolver or the egress proxy saw
 * it: the name if one was given, the address and port if known, and the rule that refused.
 */
public record DeniedConnection(Optional<String> domain, Optional<String> address, int port, String protocol, String rule) {
}
