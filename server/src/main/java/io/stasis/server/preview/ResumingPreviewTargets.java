package io.stasis.server.preview;

import io.stasis.core.lifecycle.ActivityTracker;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.node.NodeService;
import io.stasis.core.sandbox.SandboxId;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The service's {@link PreviewTargets}: a request wakes a paused or hibernated sandbox as any call
 * that needs its processes does ({@link LifecycleService#withRunning}, which also counts it as
 * activity), then goes to the sandbox's own address.
 */
public final class ResumingPreviewTargets implements PreviewTargets {
    private final LifecycleService lifecycle;
    private final ActivityTracker activity;
    private final NodeService nodes;
    private static final int MAX_KNOWN = 10_000;

    private final Function<SandboxId, InetAddress> addresses;
    private final Map<SandboxId, InetAddress> knownAddresses = new ConcurrentHashMap<>();

    /** @param addresses the address of a running sandbox as the host reaches it */
    public ResumingPreviewTargets(LifecycleService lifecycle, ActivityTracker activity, Function<SandboxId, InetAddress> addresses,
                                  NodeService nodes) {
        this.nodes = nodes;
        this.lifecycle = lifecycle;
        this.activity = activity;
        this.addresses = addresses;
    }

    @Override
    public InetSocketAddress connectTarget(SandboxId sandbox, int port) {
        return lifecycle.withRunning(sandbox, "preview", s -> new InetSocketAddress(address(sandbox), port));
    }

    /** A sandbox's address never changes while it exists, so it is looked up once, not on every request. */
    private InetAddress address(SandboxId sandbox) {
        var known = knownAddresses.get(sandbox);
        if (known != null) return known;
        if (knownAddresses.size() > MAX_KNOWN) knownAddresses.clear();
        var looked = addresses.apply(sandbox);
        knownAddresses.put(sandbox, looked);
        return looked;
    }

    @Override
    public Optional<PassOn> elsewhere(SandboxId sandbox) {
        if (!nodes.sharesCatalog()) return Optional.empty();
        return nodes.remoteOf(sandbox).map(remote -> {
            var node = remote.alive().orElseThrow(() -> new StasisException(ErrorCode.NODE_UNAVAILABLE, "sandbox " + sandbox + " is on node "
                    + remote.name() + ", which is not available: its lease has lapsed; its previews answer again when it is back",
                    Map.of("node", remote.name())));
            var listener = node.previewUrl().orElseThrow(() -> new StasisException(ErrorCode.NODE_UNAVAILABLE, "sandbox " + sandbox
                    + " is on node " + remote.name() + ", which registered no preview listener", Map.of("node", remote.name())));
            return new PassOn(nodes.name(), remote.name(), new InetSocketAddress(listener.getHost().replaceAll("^\\[|\\]$", ""), listener.getPort()));
        });
    }

    @Override
    public ActivityTracker.Attachment inUse(SandboxId sandbox) {
        return activity.attach(sandbox);
    }
}
