package io.stasis.fs.linux;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;

/** Passes bytes through until more than {@code maxBytes} arrive, then fails with {@code payload_too_large}. */
final class SizeLimitedInputStream extends FilterInputStream {
    private final long maxBytes;
    private final String path;
    private long seen;

    SizeLimitedInputStream(InputStream in, long maxBytes, String path) {
        super(in);
        this.maxBytes = maxBytes;
        this.path = path;
    }

    @Override
    public int read() throws IOException {
        int b = super.read();
        if (b != -1) count(1);
        return b;
    }

    @Override
    public int read(byte[] buffer, int off, int len) throws IOException {
        int n = super.read(buffer, off, len);
        if (n > 0) count(n);
        return n;
    }

    @Override
    public long skip(long n) {
        throw new UnsupportedOperationException("skip");
    }

    private void count(int n) {
        seen += n;
        if (seen > maxBytes)
            throw new StasisException(ErrorCode.PAYLOAD_TOO_LARGE,
                    "content for " + path + " is larger than the limit of " + maxBytes + " bytes",
                    Map.of("path", path, "maxBytes", maxBytes));
    }
}
