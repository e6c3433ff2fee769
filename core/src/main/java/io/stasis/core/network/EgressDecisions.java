package io.stasis.core.network;

import io.stasis.core.sandbox.SandboxId;

/** Told of every egress decision the service itself makes (the resolver's, the proxy's, the filter's drops). */
public interface EgressDecisions {
    /** Told, and does nothing. */
    EgressDecisions NONE = new EgressDecisions() {
        @Override
        public void allowed(SandboxId sandbox, EgressAttempt attempt) {
        }

        @Override
        public void denied(SandboxId sandbox, EgressAttempt attempt) {
        }
    };

    void allowed(SandboxId sandbox, EgressAttempt attempt);

    void denied(SandboxId sandbox, EgressAttempt attempt);
}
