package io.stasis.core.files;

import java.io.IOException;
import java.io.InputStream;

/** An open file to stream to a caller, and its size when opened. The caller closes it. */
public record FileContent(long size, InputStream stream) implements AutoCloseable {
    @Override
    public void close() throws IOException {
        stream.close();
    }
}
