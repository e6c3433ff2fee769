package io.stasis.fs.linux;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Passes bytes through until more than {@code maxBytes} arrive, then throws what {@code tooLarge}
 * makes: an upload, or a compressed archive as it inflates (a bomb stops here).
 */
public final class SizeLimitedInputStream extends FilterInputStream {
    private final long maxBytes;
    private final Supplier<? extends RuntimeException> tooLarge;
    private long seen;

    public SizeLimitedInputStream(InputStream in, long maxBytes, Supplier<? extends RuntimeException> tooLarge) {
        super(in);
        this.maxBytes = maxBytes;
        this.tooLarge = tooLarge;
    }

    /** Fails with {@code payload_too_large} naming the sandbox path the content is for. */
    static SizeLimitedInputStream forPath(InputStream in, long maxBytes, String path) {
        return new SizeLimitedInputStream(in, maxBytes, () -> new StasisException(ErrorCode.PAYLOAD_TOO_LARGE,
                "content for " + path + " is larger than the limit of " + maxBytes + " bytes", Map.of("path", path, "maxBytes", maxBytes)));
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
        if (seen > maxBytes) throw tooLarge.get();
    }
}
