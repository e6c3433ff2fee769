package io.stasis.catalog.sql;

import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.sandbox.SandboxState;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;

/**
 * A {@link SandboxState} in the sandboxes table: its wire name in {@code state}, and the fields of
 * the states that have some in columns of their own ({@code state_reason} for stopped,
 * {@code hibernated_*} for hibernated), NULL in every other state. Plain columns rather than a
 * JSON blob, so that SQL can find, say, the sandbox hibernated into a checkpoint; the table's
 * CHECK constraints keep the columns and the state consistent.
 */
final class StateColumns {
    static final String NAMES = "state, state_reason, hibernated_checkpoint_id, hibernated_image_bytes, hibernated_at";
    static final String ASSIGNMENTS = "state = ?, state_reason = ?, hibernated_checkpoint_id = ?, hibernated_image_bytes = ?, hibernated_at = ?";
    static final int COUNT = 5;

    private StateColumns() {
    }

    /** Binds the {@link #COUNT} columns in {@link #NAMES} order from {@code index}; returns the next free index. */
    static int bind(PreparedStatement st, int index, SandboxState state) throws SQLException {
        st.setString(index++, state.wireName());
        st.setString(index++, state instanceof SandboxState.Stopped(String reason) ? reason : null);
        if (state instanceof SandboxState.Hibernated(CheckpointId checkpoint, long imageBytes, var at)) {
            st.setString(index++, checkpoint.value());
            st.setLong(index++, imageBytes);
            st.setString(index++, CatalogTime.format(at));
        } else {
            st.setNull(index++, Types.VARCHAR);
            st.setNull(index++, Types.BIGINT);
            st.setNull(index++, Types.VARCHAR);
        }
        return index;
    }

    /** The state of the current row; {@link IllegalArgumentException} for a state this code does not know. */
    static SandboxState read(ResultSet rs) throws SQLException {
        String name = rs.getString("state");
        return switch (name) {
            case "running" -> SandboxState.RUNNING;
            case "paused" -> SandboxState.PAUSED;
            case "standby" -> SandboxState.STANDBY;
            case "hibernated" -> new SandboxState.Hibernated(
                    new CheckpointId(rs.getString("hibernated_checkpoint_id")),
                    rs.getLong("hibernated_image_bytes"),
                    CatalogTime.parse(rs.getString("hibernated_at")));
            case "stopped" -> new SandboxState.Stopped(rs.getString("state_reason"));
            case "deleted" -> SandboxState.DELETED;
            case null, default -> throw new IllegalArgumentException("unknown sandbox state '" + name + "'");
        };
    }
}
