package io.stasis.core.exec;

import java.io.ByteArrayOutputStream;

/** Keeps the first {@code limit} bytes of an output and remembers whether more came. */
final class OutputBuffer {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final long limit;
    private long offset;
    private boolean truncated;

    OutputBuffer(long limit) {
        this(limit, 0);
    }

    /** @param startOffset where in the output the first byte appended stands (when following from an offset) */
    OutputBuffer(long limit, long startOffset) {
        this.limit = limit;
        this.offset = startOffset;
    }

    long offset() {
        return offset;
    }

    void append(byte[] data) {
        long room = limit - bytes.size();
        if (room >= data.length) bytes.write(data, 0, data.length);
        else {
            if (room > 0) bytes.write(data, 0, (int) room);
            truncated = true;
        }
        offset += data.length;
    }

    /** Moves past output that was dropped: what is kept from here on no longer starts at the beginning. */
    void skipTo(long offset) {
        if (offset <= this.offset) return;
        this.offset = offset;
        truncated = true;
    }

    byte[] bytes() {
        return bytes.toByteArray();
    }

    boolean truncated() {
        return truncated;
    }
}
