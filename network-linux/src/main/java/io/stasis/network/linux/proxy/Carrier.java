package io.stasis.network.linux.proxy;

import java.io.IOException;

/**
 * Carries an allowed connection to its upstream and back until both sides are done. Today only
 * {@link RelayCarrier} exists, which copies bytes. This is the extension point for TLS interception
 * (adding secret headers for some domains): an {@code InterceptingCarrier} would wrap the relay,
 * terminate TLS towards the client for the domains it handles (the name is in the flow, the
 * ClientHello in {@code flow.head()}), open its own TLS connection upstream, and hand every other
 * flow to the relay unchanged.
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
