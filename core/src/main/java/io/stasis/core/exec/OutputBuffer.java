package io.stasis.core.exec;

import java.io.ByteArrayOutputStream;

/** Keeps the first {@code limit} bytes of an output and remembers whether more came. */
final class OutputBuffer {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final long limit;
    private long offset;
    private boolean truncated;

    OutputBuffer(long limit) {
        this.limit = limit;
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

    byte[] bytes() {
        return bytes.toByteArray();
    }

    boolean truncated() {
        return truncated;
    }
}
