package io.stasis.core.network;

import java.util.Optional;

/**
 * A lookup or connection a sandbox attempted, as the DNS resolver, the egress proxy or the filter's
 * drop log saw it: the name if one was given, the address and port if known, and the rule that
 * allowed or refused it.
 */
public record EgressAttempt(Optional<String> domain, Optional<String> address, int port, String protocol, String rule) {
}
