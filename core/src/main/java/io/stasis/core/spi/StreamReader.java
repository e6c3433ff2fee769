package io.stasis.core.spi;

import java.io.IOException;
import java.io.InputStream;

/** Reads a stream while its producer (a tool, a file walk) writes it; what it returns is handed back to the caller. */
@FunctionalInterface
public interface StreamReader<R> {
    R read(InputStream stream) throws IOException;
}
