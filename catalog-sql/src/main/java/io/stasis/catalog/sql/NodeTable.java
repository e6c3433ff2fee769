package io.stasis.catalog.sql;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.node.Node;
import io.stasis.core.node.NodeCapacity;
import io.stasis.core.node.NodeLimits;
import io.stasis.core.sandbox.Sandbox;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.sandbox.SandboxState;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/** The SQL of the {@code nodes} table, and of which node holds what. */
final class NodeTable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String COLUMNS = "name, advertise_url, preview_url, started_at, lease_until, capacity, draining";
    /** The tables whose rows belong to a node: their files or processes are on its host, or its operations hold them. */
    static final List<String> OWNED = List.of("sandboxes", "checkpoints", "volumes", "sandbox_networks", "checkpoint_uploads", "operations",
            "quota_holds");

    private NodeTable() {
    }

    static void put(Connection c, Node node) throws SQLException {
        try (var st = c.prepareStatement("INSERT INTO nodes (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET"
                + " advertise_url = excluded.advertise_url, preview_url = excluded.preview_url, started_at = excluded.started_at, lease_until = excluded.lease_until,"
                + " capacity = excluded.capacity, draining = excluded.draining")) {
            st.setString(1, node.name());
            st.setString(2, node.advertiseUrl().toString());
            st.setString(3, node.previewUrl().map(URI::toString).orElse(""));
            st.setString(4, CatalogTime.format(node.startedAt()));
            st.setString(5, CatalogTime.format(node.leaseUntil()));
            st.setString(6, capacityJson(node.capacity()));
            st.setInt(7, node.draining() ? 1 : 0);
            st.executeUpdate();
        }
    }

    static boolean setDraining(Connection c, String name, boolean draining) throws SQLException {
        try (var st = c.prepareStatement("UPDATE nodes SET draining = ? WHERE name = ?")) {
            st.setInt(1, draining ? 1 : 0);
            st.setString(2, name);
            return st.executeUpdate() == 1;
        }
    }

    static boolean renew(Connection c, String name, Instant leaseUntil, NodeCapacity capacity) throws SQLException {
        try (var st = c.prepareStatement("UPDATE nodes SET lease_until = ?, capacity = ? WHERE name = ?")) {
            st.setString(1, CatalogTime.format(leaseUntil));
            st.setString(2, capacityJson(capacity));
            st.setString(3, name);
            return st.executeUpdate() == 1;
        }
    }

    static List<Node> all(Connection c) throws SQLException {
        try (var st = c.prepareStatement("SELECT " + COLUMNS + " FROM nodes ORDER BY name"); var rs = st.executeQuery()) {
            var out = new ArrayList<Node>();
            while (rs.next()) out.add(read(rs));
            return out;
        }
    }

    /** The node of the row with {@code id} in {@code table}: sandboxes, checkpoints or volumes. */
    static Optional<String> nodeOf(Connection c, String table, String id) throws SQLException {
        if (!List.of("sandboxes", "checkpoints", "volumes").contains(table)) throw new IllegalArgumentException("no node by id in " + table);
        try (var st = c.prepareStatement("SELECT node FROM " + table + " WHERE id = ?")) {
            st.setString(1, id);
            try (var rs = st.executeQuery()) {
                return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
            }
        }
    }

    static Map<String, Integer> sandboxCounts(Connection c) throws SQLException {
        try (var st = c.prepareStatement("SELECT node, count(*) FROM sandboxes WHERE state <> 'deleted' GROUP BY node ORDER BY node");
             var rs = st.executeQuery()) {
            var out = new LinkedHashMap<String, Integer>();
            while (rs.next()) out.put(rs.getString(1), rs.getInt(2));
            return out;
        }
    }

    /**
     * Gives {@code node} the rows no node holds yet (written before nodes existed, or moved from a
     * SQLite file); with {@code everything}, every row, as on a SQLite file, which only one node ever
     * uses (so renaming that node loses nothing). Returns how many rows changed.
     */
    static int claim(Connection c, String node, boolean everything) throws SQLException {
        int changed = 0;
        for (String table : OWNED) {
            try (var st = c.prepareStatement("UPDATE " + table + " SET node = ? WHERE " + (everything ? "node <> ?" : "node = ''"))) {
                st.setString(1, node);
                if (everything) st.setString(2, node);
                changed += st.executeUpdate();
            }
        }
        return changed;
    }

    static List<SandboxId> sandboxesOf(Connection c, String node) throws SQLException {
        try (var st = c.prepareStatement("SELECT id FROM sandboxes WHERE node = ? AND state <> 'deleted' ORDER BY created_at, id")) {
            st.setString(1, node);
            try (var rs = st.executeQuery()) {
                var out = new ArrayList<SandboxId>();
                while (rs.next()) out.add(new SandboxId(rs.getString(1)));
                return out;
            }
        }
    }

    /**
     * Refuses an operation on a sandbox the catalog places on another node: this node's view of it is
     * stale (another node adopted it while this one was cut off from the catalog), and acting on it
     * here could run it on two nodes at once. Locks the sandbox's row until the caller's transaction
     * ends, so that an adoption at the same moment waits for it and then sees its operation.
     * Nothing for a sandbox with no record yet (one being created here).
     */
    static void requireOwnSandbox(Connection c, SqlEngine engine, SandboxId sandbox, String self) throws SQLException {
        var holder = lockedNodeOf(c, engine, sandbox);
        if (holder.isEmpty() || holder.get().equals(self) || holder.get().isEmpty()) return;
        throw new StasisException(ErrorCode.NODE_UNAVAILABLE, "sandbox " + sandbox + " is on node " + holder.get() + " now, not on node "
                + self + ", which lost the catalog for a while; it changes nothing of it, and the request is answered there when sent again",
                Map.of("node", holder.get()));
    }

    /** See {@link io.stasis.core.spi.NodeCatalog#adoptSandbox}; the caller's transaction. */
    static boolean adopt(Connection c, SqlEngine engine, SandboxId sandbox, String fromNode, String toNode, OptionalInt slot,
                         Optional<Sandbox> asHibernated) throws SQLException {
        // The row lock first: an operation its node is beginning commits before the check below, which then sees it.
        if (!lockedNodeOf(c, engine, sandbox).filter(fromNode::equals).isPresent()) return false;
        // A checkpoint the lost node was taking of a running sandbox leaves its state as it was: the sandbox is adopted
        // from its last durable checkpoint, and the old node can no longer complete that one (it is not its sandbox).
        boolean pendingCheckpoint = asHibernated.isPresent()
                && SqlStatements.exists(c, "SELECT 1 FROM operations WHERE sandbox_id = ? AND kind = 'checkpoint'", sandbox.value());
        if (pendingCheckpoint) OperationTable.end(c, sandbox);
        else if (SqlStatements.exists(c, "SELECT 1 FROM operations WHERE sandbox_id = ?", sandbox.value())) return false;
        try (var st = c.prepareStatement("UPDATE sandboxes SET node = ? WHERE id = ? AND node = ?")) {
            st.setString(1, toNode);
            st.setString(2, sandbox.value());
            st.setString(3, fromNode);
            if (st.executeUpdate() != 1) return false;
        }
        if (slot.isPresent()) {
            try (var st = c.prepareStatement("UPDATE sandbox_networks SET node = ?, slot = ? WHERE sandbox_id = ?")) {
                st.setString(1, toNode);
                st.setInt(2, slot.getAsInt());
                st.setString(3, sandbox.value());
                st.executeUpdate();
            }
        }
        try (var st = c.prepareStatement("UPDATE checkpoints SET node = ? WHERE sandbox_id = ? AND purpose = 'hibernation'")) {
            st.setString(1, toNode);
            st.setString(2, sandbox.value());
            st.executeUpdate();
        }
        if (asHibernated.isPresent() && asHibernated.get().state() instanceof SandboxState.Hibernated at) {
            SandboxTable.update(c, asHibernated.get());
            try (var st = c.prepareStatement("UPDATE checkpoints SET node = ? WHERE id = ? AND sandbox_id = ?")) {
                st.setString(1, toNode);
                st.setString(2, at.checkpoint().value());
                st.setString(3, sandbox.value());
                st.executeUpdate();
            }
        }
        return true;
    }

    private static Optional<String> lockedNodeOf(Connection c, SqlEngine engine, SandboxId sandbox) throws SQLException {
        try (var st = c.prepareStatement("SELECT node FROM sandboxes WHERE id = ?" + engine.lockingRead())) {
            st.setString(1, sandbox.value());
            try (var rs = st.executeQuery()) {
                return rs.next() ? Optional.of(rs.getString(1)) : Optional.empty();
            }
        }
    }

    private static String capacityJson(NodeCapacity capacity) {
        try {
            return JSON.writeValueAsString(Map.of("memoryTotalMb", capacity.memoryTotalMb(), "memoryAvailableMb", capacity.memoryAvailableMb(),
                    "diskFreeMb", capacity.diskFreeMb(), "runningSandboxes", capacity.runningSandboxes(),
                    "maxRunningSandboxes", capacity.limits().runningSandboxes(), "maxMemoryMb", capacity.limits().memoryMb()));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Node read(ResultSet rs) throws SQLException {
        String name = rs.getString("name");
        try {
            var capacity = JSON.readTree(rs.getString("capacity"));
            String previewUrl = rs.getString("preview_url");
            return new Node(name, URI.create(rs.getString("advertise_url")), previewUrl.isEmpty() ? Optional.empty() : Optional.of(URI.create(previewUrl)),
                    CatalogTime.parse(rs.getString("started_at")),
                    CatalogTime.parse(rs.getString("lease_until")),
                    new NodeCapacity(capacity.path("memoryTotalMb").asLong(), capacity.path("memoryAvailableMb").asLong(),
                            capacity.path("diskFreeMb").asLong(), capacity.path("runningSandboxes").asInt(),
                            new NodeLimits(capacity.path("maxRunningSandboxes").asInt(), capacity.path("maxMemoryMb").asLong())),
                    rs.getInt("draining") == 1);
        } catch (JsonProcessingException | RuntimeException e) {
            throw new StasisException(ErrorCode.INTERNAL, "the catalog's record of node " + name + " is unreadable: " + e.getMessage(),
                    Map.of("node", String.valueOf(name)), e);
        }
    }
}
