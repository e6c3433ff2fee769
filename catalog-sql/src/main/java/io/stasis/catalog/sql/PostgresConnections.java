package io.stasis.catalog.sql;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;

/**
 * PostgreSQL's {@link CatalogConnection.ConnectionSource}: a HikariCP pool, and one connection of
 * its own that holds the node's lock for as long as the catalog is open.
 *
 * <p><b>The node's lock</b> is a session-level advisory lock in the catalog's database, keyed by the
 * node's name. A second service with the same node name is refused at start, with who holds it: two
 * services would each reconcile the node's sandboxes as their own. Services of other names share the
 * catalog. The lock goes with its session, so a killed service frees it as soon as PostgreSQL notices
 * the connection is gone. A service whose session was lost while it runs (a cut from the server)
 * takes the lock again before its next lease renewal; if another service of its name took it
 * meanwhile, the renewal fails, and the node's lease lapses: it changes nothing from then on.
 */
final class PostgresConnections implements CatalogConnection.ConnectionSource {
    /** The advisory locks' first key ("STAS"); the second is the hash of the node's name. */
    private static final int NODE_LOCK_CLASS = 0x5354_4153;
    private static final int POOL_SIZE = 16;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    private static final int LOCK_CHECK_SECONDS = 2;

    private final PostgresLocation location;
    private final HikariDataSource pool;
    private Connection lockHolder; // set by claim, closed by close
    private String node; // whose lock it holds

    private PostgresConnections(PostgresLocation location, HikariDataSource pool) {
        this.location = location;
        this.pool = pool;
    }

    /** Opens the pool; fails (a runtime exception naming the cause) when no connection can be made. */
    static PostgresConnections open(PostgresLocation location) {
        var config = new HikariConfig();
        config.setPoolName("stasis-catalog");
        config.setJdbcUrl(location.jdbcUrl());
        config.setUsername(location.user());
        location.password().ifPresent(config::setPassword);
        config.setMaximumPoolSize(POOL_SIZE);
        config.setMinimumIdle(2);
        config.setConnectionTimeout(CONNECT_TIMEOUT.toMillis());
        config.addDataSourceProperty("ApplicationName", applicationName());
        config.addDataSourceProperty("connectTimeout", String.valueOf(CONNECT_TIMEOUT.toSeconds()));
        return new PostgresConnections(location, new HikariDataSource(config));
    }

    /** Takes the lock of {@code node}, or refuses naming who holds it. */
    synchronized void claim(String node) throws SQLException {
        var properties = new Properties();
        properties.setProperty("user", location.user());
        location.password().ifPresent(p -> properties.setProperty("password", p));
        properties.setProperty("ApplicationName", applicationName());
        properties.setProperty("connectTimeout", String.valueOf(CONNECT_TIMEOUT.toSeconds()));
        Connection connection = DriverManager.getConnection(location.jdbcUrl(), properties);
        try (var st = connection.prepareStatement("SELECT pg_try_advisory_lock(?, hashtext(?))")) {
            st.setInt(1, NODE_LOCK_CLASS);
            st.setString(2, node);
            try (var rs = st.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    String holder = holder(connection, node);
                    connection.close();
                    throw new StasisException(ErrorCode.INTERNAL, "node '" + node + "' is already running on the catalog " + location + " ("
                            + holder + "); give this service another --node-name", Map.of("database", location.toString(), "node", node,
                            "holder", holder));
                }
            }
        } catch (SQLException | RuntimeException e) {
            if (!connection.isClosed()) connection.close();
            throw e;
        }
        lockHolder = connection;
        this.node = node;
    }

    /**
     * The lock's session may have ended under it (a cut from the server): with it, the lock, which a
     * second service of the same name could then take. Checked before each lease renewal.
     */
    @Override
    public synchronized void keepClaim() throws SQLException {
        if (node == null || lockHolder != null && lockHolder.isValid(LOCK_CHECK_SECONDS)) return;
        if (lockHolder != null) {
            closeLockHolder();
            lockHolder = null;
        }
        claim(node);
    }

    /** Who holds the node's lock, as PostgreSQL knows the session. */
    private static String holder(Connection connection, String node) throws SQLException {
        try (var st = connection.prepareStatement("""
                SELECT a.application_name, coalesce(host(a.client_addr), 'local'), a.backend_start
                FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND l.classid::bigint = ? AND l.objid::bigint = hashtext(?)::bigint & 4294967295 AND l.objsubid = 2""")) {
            st.setLong(1, NODE_LOCK_CLASS);
            st.setString(2, node);
            try (var rs = st.executeQuery()) {
                if (!rs.next()) return "a session that has just ended";
                return rs.getString(1) + " from " + rs.getString(2) + " since " + rs.getString(3);
            }
        }
    }

    private static String applicationName() {
        return "stasis " + ProcessHandle.current().pid() + "@" + hostName();
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            return "unknown-host";
        }
    }

    @Override
    public Connection borrow() throws SQLException {
        return pool.getConnection();
    }

    @Override
    public void giveBack(Connection connection) throws SQLException {
        connection.close();
    }

    /** SQLSTATE class 08 (connection exception) or 57P01-57P03 (the server ended or is not yet taking sessions). */
    @Override
    public boolean lost(SQLException e) {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || state.equals("57P01") || state.equals("57P02") || state.equals("57P03"));
    }

    @Override
    public synchronized void close() throws SQLException {
        try {
            pool.close();
        } finally {
            if (lockHolder != null) closeLockHolder();
        }
    }

    /**
     * A lock session whose connection broke (the network to the server was cut) cannot say goodbye:
     * the driver reports it, but the server has ended the session, and the lock with it.
     */
    private void closeLockHolder() throws SQLException {
        try {
            lockHolder.close();
        } catch (SQLException e) {
            if (!lost(e) && lockHolder.isValid(1)) throw e;
        }
    }
}
