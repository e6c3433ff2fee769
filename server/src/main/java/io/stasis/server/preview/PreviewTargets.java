package io.stasis.server.preview;

import io.stasis.core.lifecycle.ActivityTracker;
import io.stasis.core.sandbox.SandboxId;
import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * Where the preview proxy connects for a sandbox's port. {@code Daemon} implements it; tests point
 * it at loopback servers.
 */
public interface PreviewTargets {

    /**
     * The address of {@code port} of the sandbox, ready to connect to. Called once per proxied
     * request, and counts as use of the sandbox for its idle policy.
     * <p>Effects on success: the sandbox runs (a paused or hibernated one is resumed first, as
     * any API call that needs its processes does).
     * <p>On failure: a {@code StasisException}: {@code sandbox_not_found} (the proxy answers 404),
     * {@code invalid_state} when it is stopped or its auto-resume is off (503), anything else (502).
     */
    InetSocketAddress connectTarget(SandboxId sandbox, int port);

    /**
     * Marks the sandbox as in use until the handle closes: held while a request is answered
     * (a long download or event stream) and while a WebSocket is open, so that the idle policy
     * does not pause the sandbox under it.
     */
    /**
     * Where to pass a request for a sandbox on another node sharing the catalog: that node's preview
     * listener, which checks the request again and serves it from the sandbox's host. Empty when the
     * sandbox is this node's (or there is only one node).
     *
     * @throws io.stasis.core.error.StasisException {@code node_unavailable} when its node is gone (the proxy answers 503)
     */
    default Optional<PassOn> elsewhere(SandboxId sandbox) {
        return Optional.empty();
    }

    /** A request passed from node {@code from} to the preview listener of node {@code to}. */
    record PassOn(String from, String to, InetSocketAddress listener) {
    }

    default ActivityTracker.Attachment inUse(SandboxId sandbox) {
        return () -> {
        };
    }
}
