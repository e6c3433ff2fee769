package io.stasis.catalog.sql;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The only way to the catalog's database: every call borrows a connection from its
 * {@link ConnectionSource}, optionally runs in one transaction, gives the connection back, and turns
 * SQL errors into {@code internal} errors naming the step and the database. The {@code *Table}
 * classes hold the SQL and take the connection this lends them, so a change spanning tables is one
 * transaction.
 */
final class CatalogConnection {
    /** Tries per call when connections turn out lost: the pool may hold several sessions the server ended at once. */
    private static final int ATTEMPTS = 4;

    private final String database;
    private final ConnectionSource source;
    private volatile boolean closed;

    CatalogConnection(String database, ConnectionSource source) {
        this.database = database;
        this.source = source;
    }

    /** Where connections come from, and what lending one means (a lock, a pool). */
    interface ConnectionSource {
        /** A connection in auto-commit mode that the caller alone uses until {@link #giveBack}. */
        Connection borrow() throws SQLException;

        /**
         * A connection for work that only reads, which the caller alone uses until {@link #giveBack}:
         * a source may keep connections apart for reads, so that they neither wait for a write nor for
         * each other.
         */
        default Connection borrowForReading() throws SQLException {
            return borrow();
        }

        void giveBack(Connection connection) throws SQLException;

        /** Whether {@code e} says the connection was lost, so the work may run again on another. */
        default boolean lost(SQLException e) {
            return false;
        }

        /**
         * Makes sure this service still holds its node's lock, taking it again if the session that
         * held it was lost (the server ended it, or the network to it was cut: the lock went with it).
         *
         * @throws io.stasis.core.error.StasisException if another service took the node's name meanwhile
         */
        default void keepClaim() throws SQLException {
        }

        /** Closes every connection; called once. */
        void close() throws SQLException;
    }

    /**
     * SQLite's source: one connection for writes, lent to one caller at a time under a
     * {@link ReentrantLock} (not {@code synchronized}, which the server's virtual threads would have to
     * queue on a monitor for), and up to {@value #READERS} more for reads. A catalog call is
     * sub-millisecond, but on a host whose cores are busy its caller may lose its core while it holds
     * the connection: with one connection for everything, every other call then waited (measured under
     * churn: waits of 50-375 ms for the one connection, the tails of every GET and exec). Each read runs
     * in a transaction of its own on a reader, one snapshot of the WAL file for all its statements,
     * begun after every write that had committed: a caller reads what it wrote.
     */
    static final class SqliteConnections implements ConnectionSource {
        static final int READERS = 4;

        private final Connection writer;
        private final ReentrantLock lock = new ReentrantLock();
        private final ReaderFactory newReader;
        private final Semaphore readerSlots = new Semaphore(READERS);
        /** The readers opened and not lent: all of them once every slot is free. */
        private final Deque<Connection> idleReaders = new ConcurrentLinkedDeque<>();
        private volatile boolean shut;

        /** Opens a connection for reads: not in auto-commit mode, refusing writes. */
        @FunctionalInterface
        interface ReaderFactory {
            Connection open() throws SQLException;
        }

        SqliteConnections(Connection writer, ReaderFactory newReader) {
            this.writer = writer;
            this.newReader = newReader;
        }

        @Override
        public Connection borrow() {
            lock.lock();
            return writer;
        }

        @Override
        public Connection borrowForReading() throws SQLException {
            readerSlots.acquireUninterruptibly();
            if (shut) {
                readerSlots.release();
                throw new SQLException("the catalog is closed");
            }
            var idle = idleReaders.poll();
            if (idle != null) return idle;
            try {
                return newReader.open();
            } catch (SQLException | RuntimeException e) {
                readerSlots.release();
                throw e;
            }
        }

        @Override
        public void giveBack(Connection lent) throws SQLException {
            if (lent == writer) {
                lock.unlock();
                return;
            }
            try {
                lent.rollback(); // ends the read's transaction: the next read sees every write committed by then
                idleReaders.push(lent);
            } catch (SQLException e) {
                try {
                    lent.close(); // not lent again: a reader whose transaction cannot end would show an old snapshot
                } catch (SQLException closing) {
                    e.addSuppressed(closing);
                }
                throw e;
            } finally {
                readerSlots.release();
            }
        }

        @Override
        public void close() throws SQLException {
            shut = true;
            readerSlots.acquireUninterruptibly(READERS); // the reads under way end first: then every reader is idle
            lock.lock();
            try {
                for (var reader : idleReaders) reader.close();
                writer.close();
            } finally {
                lock.unlock();
                readerSlots.release(READERS);
            }
        }
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

    /** Runs {@code work} alone on a connection; SQL errors become {@code internal} naming the step. */
    <T> T withConnection(String step, SqlWork<T> work) {
        return attempt(step, false, work);
    }

    /**
     * Runs {@code work}, which only reads, on a connection for reads (see
     * {@link ConnectionSource#borrowForReading}); SQL errors become {@code internal} naming the step.
     */
    <T> T read(String step, SqlWork<T> work) {
        return attempt(step, true, work);
    }

    private <T> T attempt(String step, boolean reading, SqlWork<T> work) {
        if (closed) throw new StasisException(ErrorCode.INTERNAL, "the catalog " + database + " is closed", Map.of("step", step));
        for (int attempt = 1; ; attempt++) {
            try {
                return once(reading, work);
            } catch (SQLException e) {
                // A pooled session the server ended (a restart, a failover, an idle timeout) fails, and the
                // pool discards it. PostgreSQL rolled back what the session had not committed, so the work
                // runs again on another; only a loss during the commit itself leaves its outcome unknown.
                if (attempt == ATTEMPTS || !source.lost(e)) throw failure(step, e);
            }
        }
    }

    private <T> T once(boolean reading, SqlWork<T> work) throws SQLException {
        Connection connection = reading ? source.borrowForReading() : source.borrow();
        try {
            return work.run(connection);
        } finally {
            try {
                source.giveBack(connection);
            } catch (SQLException e) {
                // The work's outcome stands; a connection that cannot be returned is the pool's to discard.
            }
        }
    }

    /** See {@link ConnectionSource#keepClaim}; SQL errors become {@code internal} naming the step. */
    void keepClaim(String step) {
        if (closed) throw new StasisException(ErrorCode.INTERNAL, "the catalog " + database + " is closed", Map.of("step", step));
        try {
            source.keepClaim();
        } catch (SQLException e) {
            throw failure(step, e);
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

    /** Closes the source; false if it was already closed. Later calls fail with {@code internal}. */
    synchronized boolean close() {
        if (closed) return false;
        closed = true;
        try {
            source.close();
            return true;
        } catch (SQLException e) {
            throw failure("close", e);
        }
    }

    private StasisException failure(String step, SQLException e) {
        var details = new LinkedHashMap<String, Object>();
        details.put("step", "catalog " + step);
        details.put("database", database);
        // Out of reach (a network cut, the server down) is the service's state, not a fault of the request: 503, to be sent again.
        if (source.lost(e)) return new StasisException(ErrorCode.HOST_BUSY, "the catalog " + database + " is out of this service's reach ("
                + step + "): " + e.getMessage() + "; try again", details, e);
        return new StasisException(ErrorCode.INTERNAL, "catalog " + step + " failed: " + e.getMessage(), details, e);
    }
}
