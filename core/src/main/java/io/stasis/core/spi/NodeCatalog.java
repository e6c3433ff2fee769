package io.stasis.core.spi;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.node.Node;
import io.stasis.core.node.NodeCapacity;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantUsage;
import io.stasis.core.volume.VolumeId;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The nodes sharing a catalog, and which node each sandbox is on.
 *
 * <p><b>This node.</b> A catalog is opened for one node, its {@link #localNode()}: every sandbox,
 * checkpoint, volume, network and operation it inserts is that node's, and the {@code all*} listings
 * of the other roles ({@code all()}, {@code allNetworks()}, {@code allCheckpoints()}, ...), which the
 * service reconciles its host against, return that node's records only. Lookups by id or name, and
 * the API's listings, see every node's. On a catalog only one node uses, that is every record.
 */
public interface NodeCatalog {
    /** The node this catalog was opened for. */
    String localNode();

    /** Records the node, replacing its earlier record (a restart registers again). */
    void putNode(Node node);

    /** Extends the node's lease and records its capacity; false if the node has no record (it must register again). */
    boolean renewNode(String name, Instant leaseUntil, NodeCapacity capacity);

    /** Marks the node as being drained, or not; false if the node has no record. */
    boolean setDraining(String name, boolean draining);

    /** Every node ever registered, by name. */
    List<Node> nodes();

    /** The node the sandbox is on; empty if there is no such sandbox. */
    Optional<String> nodeOf(SandboxId sandbox);

    /** The node whose disk has the checkpoint's files; empty if there is no such checkpoint. */
    Optional<String> nodeOfCheckpoint(CheckpointId checkpoint);

    /** The node whose disk has the volume; empty if there is no such volume. */
    Optional<String> nodeOfVolume(VolumeId volume);

    /** How many sandboxes (not being deleted) each node has, by node name; nodes without any are absent. */
    Map<String, Integer> sandboxCountsByNode();

    /**
     * What each node holds, by node name, counted as a tenant's usage is: its sandboxes with processes
     * (running, paused, standby) and their memory limits, the disk limits of all its sandboxes, plus
     * its quota holds (see {@link TenantCatalog#hold}); nodes holding nothing are absent.
     */
    Map<String, TenantUsage> nodeLoads();

    /** The sandboxes of {@code node}, in any state but being deleted, oldest first. */
    List<SandboxId> sandboxesOfNode(String node);

    /**
     * Makes a sandbox of {@code fromNode} this node's, with its network (on {@code slot}, one of this
     * node's) and its hibernation image's record, in one transaction; only while it is still
     * {@code fromNode}'s and no operation of it is pending. Returns whether it did: of several nodes
     * adopting at once, one does.
     *
     * @param asHibernated for a sandbox that had processes on {@code fromNode}: its record as it is to
     *                     be here, hibernated at a durable memory checkpoint of it, whose record moves
     *                     here too; empty for a sandbox hibernated already
     */
    boolean adoptSandbox(SandboxId sandbox, String fromNode, OptionalInt slot, Optional<Sandbox> asHibernated);
}
