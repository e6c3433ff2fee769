package io.stasis.catalog.sql;

import java.sql.Connection;
import java.sql.SQLException;

/** The one-key statements the tables share: a write or an existence check keyed by one string. */
final class SqlStatements {
    private SqlStatements() {
    }

    /** Runs {@code sql}, whose one parameter is {@code key}; returns how many rows it changed. */
    static int update(Connection c, String sql, String key) throws SQLException {
        try (var st = c.prepareStatement(sql)) {
            st.setString(1, key);
            return st.executeUpdate();
        }
    }

    /** Whether {@code select}, whose one parameter is {@code key}, finds a row. */
    static boolean exists(Connection c, String select, String key) throws SQLException {
        try (var st = c.prepareStatement("SELECT EXISTS (" + select + ")")) {
            st.setString(1, key);
            try (var rs = st.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }
}
