package io.stasis.cli;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table with left-aligned columns three spaces apart and no trailing blanks.
 * Null cells print as {@code -}.
 *
 * <pre>
 * ID      NAME   STATE
 * sbx_1   a      running
 * </pre>
 */
final class Table {
    private static final String GAP = "   ";
    private final String[] headers;
    private final List<String[]> rows = new ArrayList<>();

    private Table(String[] headers) {
        this.headers = headers;
    }

    static Table withHeaders(String... headers) {
        return new Table(headers);
    }

    /** Rows only, e.g. key / value pairs. */
    static Table withoutHeaders() {
        return new Table(null);
    }

    Table row(Object... cells) {
        if (headers != null && cells.length != headers.length) {
            throw new IllegalArgumentException("row has " + cells.length + " cells, table has " + headers.length);
        }
        rows.add(Arrays.stream(cells).map(c -> c == null ? "-" : c.toString()).toArray(String[]::new));
        return this;
    }

    boolean isEmpty() {
        return rows.isEmpty();
    }

    String render() {
        var all = new ArrayList<String[]>();
        if (headers != null) all.add(headers);
        all.addAll(rows);
        int columns = all.stream().mapToInt(r -> r.length).max().orElse(0);
        int[] widths = new int[columns];
        for (String[] row : all) {
            for (int i = 0; i < row.length; i++) widths[i] = Math.max(widths[i], row[i].length());
        }
        var text = new StringBuilder();
        for (String[] row : all) {
            var line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                if (i > 0) line.append(GAP);
                line.append(row[i]);
                if (i < row.length - 1) line.append(" ".repeat(widths[i] - row[i].length()));
            }
            text.append(line.toString().stripTrailing()).append('\n');
        }
        return text.toString();
    }
}
