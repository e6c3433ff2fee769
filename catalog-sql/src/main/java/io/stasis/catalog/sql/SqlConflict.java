package io.stasis.catalog.sql;

import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.postgresql.util.PSQLException;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * A write refused because a row with the same key exists, as either engine reports it: whether the
 * key was the primary key, and its columns. The tables turn it into the error callers understand
 * ({@code name_taken}, or {@code internal} for an id that should never repeat).
 *
 * @param primaryKey whether the colliding key is the table's primary key
 * @param columns    the key's columns, without the table name
 */
record SqlConflict(boolean primaryKey, List<String> columns) {
    private static final String POSTGRESQL_UNIQUE_VIOLATION = "23505";

    /** The conflict {@code e} reports, or empty when it reports anything else. */
    static Optional<SqlConflict> of(SQLException e) {
        if (e instanceof SQLiteException sqlite) return ofSqlite(sqlite);
        if (e instanceof PSQLException pg && POSTGRESQL_UNIQUE_VIOLATION.equals(pg.getSQLState())) return ofPostgres(pg);
        return Optional.empty();
    }

    /** Whether the key includes {@code column}. */
    boolean on(String column) {
        return columns.contains(column);
    }

    /** SQLite says "UNIQUE constraint failed: sandboxes.tenant_id, sandboxes.name" and tells a primary key by its result code. */
    private static Optional<SqlConflict> ofSqlite(SQLiteException e) {
        boolean primaryKey = e.getResultCode() == SQLiteErrorCode.SQLITE_CONSTRAINT_PRIMARYKEY;
        if (!primaryKey && e.getResultCode() != SQLiteErrorCode.SQLITE_CONSTRAINT_UNIQUE) return Optional.empty();
        String message = String.valueOf(e.getMessage());
        int start = message.indexOf("failed: ");
        if (start < 0) return Optional.of(new SqlConflict(primaryKey, List.of()));
        String list = message.substring(start + "failed: ".length());
        int end = list.indexOf(')');
        if (end >= 0) list = list.substring(0, end);
        var columns = Arrays.stream(list.split(","))
                .map(String::strip)
                .map(qualified -> qualified.substring(qualified.indexOf('.') + 1))
                .toList();
        return Optional.of(new SqlConflict(primaryKey, columns));
    }

    /** PostgreSQL names the constraint ({@code <table>_pkey} for a primary key) and says "Key (tenant_id, name)=(...) already exists." */
    private static Optional<SqlConflict> ofPostgres(PSQLException e) {
        var server = e.getServerErrorMessage();
        String constraint = server == null ? null : server.getConstraint();
        String detail = server == null ? null : server.getDetail();
        boolean primaryKey = constraint != null && constraint.endsWith("_pkey");
        if (detail == null || !detail.startsWith("Key (")) return Optional.of(new SqlConflict(primaryKey, List.of()));
        int end = detail.indexOf(")=(");
        if (end < 0) return Optional.of(new SqlConflict(primaryKey, List.of()));
        var columns = Arrays.stream(detail.substring("Key (".length(), end).split(",")).map(String::strip).toList();
        return Optional.of(new SqlConflict(primaryKey, columns));
    }
}
