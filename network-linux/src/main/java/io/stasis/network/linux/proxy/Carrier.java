package io.stasis.network.linux.proxy;

import java.io.IOException;

/**
 * Carries an allowed connection to its upstream and back until both sides are done.
 * {@link RelayCarrier} copies bytes; {@link InterceptingCarrier} wraps it, terminates TLS towards
 * the client for names with header rules (the name is in the flow, the ClientHello in
 * {@code flow.head()}), opens its own TLS connection upstream, and hands every other flow to the
 * relay unchanged.
 */
interface Carrier {
    /**
     * Returns when both directions have ended. Everything it opens is added to {@code teardown}.
     *
     * @throws UpstreamUnreachableException before anything was sent to the client, if the upstream cannot be reached
     */
    void carry(AllowedFlow flow, NativeSocket client, Teardown teardown) throws IOException;

    /** The upstream refused or did not answer the connect; the client has been sent nothing yet. */
    final class UpstreamUnreachableException extends IOException {
        UpstreamUnreachableException(String message, IOException cause) {
            super(message, cause);
        }
    }
}
