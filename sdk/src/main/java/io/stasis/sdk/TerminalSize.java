package io.stasis.sdk;

/**
 * A terminal's size in character cells.
 *
 * @param cols columns, at least 1
 * @param rows rows, at least 1
 */
public record TerminalSize(int cols, int rows) {
    public TerminalSize {
        if (cols < 1 || rows < 1) {
            throw new IllegalArgumentException("a terminal needs at least 1 column and 1 row, was " + cols + "x" + rows);
        }
    }

    @Override
    public String toString() {
        return cols + "x" + rows;
    }
}
