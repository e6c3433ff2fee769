package io.stasis.catalog.sql;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

/**
 * What differs between the two databases the catalog runs on. The tables' SQL is otherwise the
 * same on both: standard SQL with {@code ON CONFLICT} upserts and {@code RETURNING}, times as
 * fixed-width ISO text, JSON in text columns.
 */
enum SqlEngine {
    /** One file, one connection; every write is already serialised by SQLite's write lock. */
    SQLITE("sqlite", List.of(
            "V1__init.sql",
            "V2__live_state.sql",
            "V3__network.sql",
            "V4__previews.sql",
            "V5__secrets.sql",
            "V6__tenants.sql",
            "V7__disk_limit.sql",
            "V8__durable_checkpoints.sql",
            "V9__volumes.sql",
            "V10__bucket_mounts.sql",
            "V11__generation.sql",
            "V12__durable_images.sql",
            "V13__fork_spares.sql",
            "V14__runtimes.sql",
            "V15__nodes.sql",
            "V16__node_drain.sql",
            "V17__quota_holds.sql",
            "V18__node_preview_url.sql", "V19__previews_of_every_port.sql", "V20__tenant_runtimes.sql",
            "V21__tenant_rates.sql")) {
        @Override
        String metadataMatch(String column) {
            // json_each compares keys as plain strings: no JSON-path quoting of keys with '.' or '/'.
            return "EXISTS (SELECT 1 FROM json_each(" + column + ") m WHERE m.key = ? AND m.value = ? AND m.type = 'text')";
        }

        @Override
        void serialize(Connection c, Turn turn) {
            // The connection opens transactions with BEGIN IMMEDIATE: the file's write lock is the turn.
        }

        @Override
        String lockingRead() {
            return ""; // the transaction holds the file's write lock already
        }
    },

    /** A pool of connections, possibly from several services: turns are transaction-scoped advisory locks. */
    POSTGRESQL("postgresql", List.of("V1__init.sql", "V2__nodes.sql", "V3__node_drain.sql", "V4__quota_holds.sql", "V5__node_preview_url.sql",
            "V6__previews_of_every_port.sql", "V7__tenant_runtimes.sql", "V8__tenant_rates.sql")) {
        @Override
        String metadataMatch(String column) {
            return "EXISTS (SELECT 1 FROM jsonb_each_text(" + column + "::jsonb) m WHERE m.key = ? AND m.value = ?)";
        }

        @Override
        void serialize(Connection c, Turn turn) throws SQLException {
            try (var st = c.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
                st.setLong(1, turn.lockKey);
                st.executeQuery().close();
            }
        }

        @Override
        String lockingRead() {
            return " FOR UPDATE";
        }
    };

    /** Work that must not interleave with the same work of another connection, even in another service. */
    enum Turn {
        /** Applying migrations: two services starting at once must not both apply a script. */
        MIGRATION(0x5354_4153_0001L),
        /**
         * Appending an event: ids must become visible in id order, or a reader polling "after id N"
         * could pass an id whose transaction commits later and never see it.
         */
        EVENT_APPEND(0x5354_4153_0002L),
        /** Admitting a quota hold: two must not both pass on the same figures of a tenant or a node. */
        QUOTA_HOLD(0x5354_4153_0003L);

        private final long lockKey;

        Turn(long lockKey) {
            this.lockKey = lockKey;
        }
    }

    private final String migrationDirectory;
    private final List<String> migrationScripts;

    SqlEngine(String migrationDirectory, List<String> migrationScripts) {
        this.migrationDirectory = migrationDirectory;
        this.migrationScripts = migrationScripts;
    }

    /** A condition with two parameters, key then value: the JSON object of strings in {@code column} maps that key to that value. */
    abstract String metadataMatch(String column);

    /** Waits, inside the caller's open transaction, until no other transaction takes {@code turn}; holds it until commit or rollback. */
    abstract void serialize(Connection c, Turn turn) throws SQLException;

    /**
     * What ends a {@code SELECT} of rows the transaction is about to act on so that another
     * transaction acting on them waits for its end: statements after it see what that other one
     * committed (read committed takes a snapshot per statement).
     */
    abstract String lockingRead();

    /** The classpath folder of this engine's migration scripts, ending in '/'. */
    String migrationDirectory() {
        return "db/migration/" + migrationDirectory + "/";
    }

    /**
     * Every migration script, oldest first. Listed rather than discovered, because a classpath
     * folder cannot be listed portably inside a jar; a test checks the list against the folder.
     * Add new ones at the end; never edit a released one.
     */
    List<String> migrationScripts() {
        return migrationScripts;
    }
}
