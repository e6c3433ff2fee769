package io.stasis.core.network;

/**
 * Whether a sandbox may reach a destination, and the rule that decided: an entry of the policy
 * ({@code "deny *.example.com"}), the default ({@code "default deny"}), or a block no policy can lift
 * ({@code "blocked link-local"}).
 */
public record EgressDecision(boolean allowed, String rule) {

    public static EgressDecision allow(String rule) {
        return new EgressDecision(true, rule);
    }

    public static EgressDecision deny(String rule) {
        return new EgressDecision(false, rule);
    }
}
