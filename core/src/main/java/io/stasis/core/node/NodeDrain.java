package io.stasis.core.node;

import io.stasis.core.checkpoint.DurableCheckpoints;
import io.stasis.core.error.StasisException;
import io.stasis.core.lifecycle.LifecycleService;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import io.stasis.core.spi.Catalog;
import io.stasis.core.spi.RootStore;
import io.stasis.core.spi.RuntimeImages;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Empties this node for maintenance: it is marked draining (it places no new sandboxes, and the
 * other nodes take its durably hibernated ones at once, as from a lost node: {@link LostNodes}),
 * then each of its sandboxes with processes is hibernated and each hibernation made durable. Its
 * sandboxes resume on the node that takes them, at their next call. What cannot move (a stopped
 * sandbox, whose files have no durable copy) stays, and the report says why.
 *
 * <p>Once a sandbox's hibernation is durable, this node's copy of it (its root, the image and the
 * image's snapshot) is removed: a drained node holds nothing, and a sandbox resumed here after the
 * drain ends comes back from the durable store, as on any other node.
 */
public final class NodeDrain {
    private static final Logger log = LoggerFactory.getLogger(NodeDrain.class);

    private final Catalog catalog;
    private final LifecycleService lifecycle;
    private final DurableCheckpoints durable;
    private final RootStore roots;
    private final RuntimeImages images;

    public NodeDrain(Catalog catalog, LifecycleService lifecycle, DurableCheckpoints durable, RootStore roots, RuntimeImages images) {
        this.catalog = catalog;
        this.lifecycle = lifecycle;
        this.durable = durable;
        this.roots = roots;
        this.images = images;
    }

    /** What a drain did: the sandboxes handed over (made durable, for the other nodes to take) and those left, with why. */
    public record Report(String node, List<SandboxId> handedOver, List<Left> left) {
    }

    /** A sandbox a drain could not hand over. */
    public record Left(SandboxId sandbox, String why) {
    }

    /** Marks this node draining and hands its sandboxes over; returns once each is durable or reported. */
    public Report drain() {
        String node = catalog.localNode();
        catalog.setDraining(node, true);
        var handedOver = new ArrayList<SandboxId>();
        var left = new ArrayList<Left>();
        for (Sandbox sandbox : catalog.all()) {
            try {
                switch (sandbox.state()) {
                    case SandboxState.Deleted d -> { }
                    case SandboxState.Stopped s -> left.add(new Left(sandbox.id(), "stopped: its files have no durable copy; start it (it is"
                            + " then hibernated by a new drain) or delete it"));
                    default -> {
                        var hibernated = sandbox.state() instanceof SandboxState.Hibernated ? sandbox
                                : lifecycle.hibernate(sandbox.id(), LifecycleService.Reason.API);
                        makeDurable(hibernated);
                        releaseLocalCopy(hibernated);
                        handedOver.add(sandbox.id());
                    }
                }
            } catch (StasisException e) {
                left.add(new Left(sandbox.id(), e.getMessage()));
            }
        }
        log.atInfo().addKeyValue("node", node).addKeyValue("handedOver", handedOver.size()).addKeyValue("left", left.size()).log("node drained");
        return new Report(node, handedOver, left);
    }

    /** Ends a drain: the node places sandboxes again (those handed over stay where they went). */
    public void undrain() {
        catalog.setDraining(catalog.localNode(), false);
    }

    private void releaseLocalCopy(Sandbox sandbox) {
        var image = ((SandboxState.Hibernated) sandbox.state()).checkpoint();
        roots.deleteRoot(sandbox.id());
        images.deleteImage(image);
        roots.deleteSnapshot(image);
    }

    private void makeDurable(Sandbox sandbox) {
        if (!(sandbox.state() instanceof SandboxState.Hibernated h)) throw new IllegalStateException(sandbox.id() + " is not hibernated");
        if (catalog.durableImage(sandbox.id()).filter(image -> image.checkpoint().equals(h.checkpoint())).isPresent()) return;
        var checkpoint = catalog.findCheckpoint(h.checkpoint())
                .orElseThrow(() -> new IllegalStateException("the hibernation image " + h.checkpoint() + " of " + sandbox.id() + " has no record"));
        durable.upload(checkpoint, sandbox);
    }
}
