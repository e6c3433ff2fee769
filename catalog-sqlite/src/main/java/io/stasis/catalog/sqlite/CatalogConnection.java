package io.stasis.catalog.sqlite;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The catalog's one connection and the only way to use it: every call runs alone on it under a
 * {@link ReentrantLock} (not {@code synchronized}, which the server's virtual threads would have to
 * queue on a monitor for), optionally in one transaction, and its SQL errors become
 * {@code internal} errors naming the step and the file. The {@code *Table} classes hold the SQL and
 * take the connection this lends them, so a change spanning tables is one transaction.
 */
final class CatalogConnection {
    private final Path file;
    private final Connection connection;
    private final ReentrantLock lock = new ReentrantLock();
    private boolean closed; // guarded by lock

    CatalogConnection(Path file, Connection connection) {
        this.file = file;
        this.connection = connection;
    }

    /** Work on the connection that gives a result. */
    @FunctionalInterface
    interface SqlWork<T> {
        T run(Connection connection) throws SQLException;
    }

    /** Work on the connection that gives nothing back. */
    @FunctionalInterface
    interface SqlAction {
        void run(Connection connection) throws SQLException;
    }

    /** Runs {@code work} alone on the connection; SQL errors become {@code internal} naming the step. */
    <T> T withConnection(String step, SqlWork<T> work) {
        lock.lock();
        try {
            if (closed) throw new StasisException(ErrorCode.INTERNAL, "the catalog " + file + " is closed", Map.of("step", step));
            return work.run(connection);
        } catch (SQLException e) {
            throw failure(step, e);
        } finally {
            lock.unlock();
        }
    }

    /** {@link #withConnection} for work without a result. */
    void run(String step, SqlAction action) {
        withConnection(step, c -> {
            action.run(c);
            return null;
        });
    }

    /**
     * Runs {@code work} alone on the connection in one transaction: all of it is committed, or on
     * any exception none of it.
     */
    <T> T inTransaction(String step, SqlWork<T> work) {
        return withConnection(step, c -> {
            c.setAutoCommit(false);
            try {
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                try {
                    c.rollback();
                } catch (SQLException rollbackFailure) {
                    e.addSuppressed(rollbackFailure);
                }
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        });
    }

    /** {@link #inTransaction} for work without a result. */
    void runInTransaction(String step, SqlAction action) {
        inTransaction(step, c -> {
            action.run(c);
            return null;
        });
    }

    /** Closes the connection; false if it was already closed. Later calls fail with {@code internal}. */
    boolean close() {
        lock.lock();
        try {
            if (closed) return false;
            closed = true;
            connection.close();
            return true;
        } catch (SQLException e) {
            throw failure("close", e);
        } finally {
            lock.unlock();
        }
    }

    private StasisException failure(String step, SQLException e) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", "catalog " + step);
        details.put("database", file.toString());
        return new StasisException(ErrorCode.INTERNAL, "catalog " + step + " failed: " + e.getMessage(), details, e);
    }
}
