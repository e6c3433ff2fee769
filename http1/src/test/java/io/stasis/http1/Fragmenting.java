package io.stasis.http1;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Random;

/** Hands out a few bytes per read, the counts drawn from a seed: a stream split at random points, as TCP or TLS records may. */
final class Fragmenting extends InputStream {
    private final ByteArrayInputStream bytes;
    private final Random random;
    private final int most;

    Fragmenting(byte[] bytes, long seed, int most) {
        this.bytes = new ByteArrayInputStream(bytes);
        this.random = new Random(seed);
        this.most = most;
    }

    static HttpInput of(byte[] bytes, long seed, int most) {
        return new HttpInput(new Fragmenting(bytes, seed, most));
    }

    static HttpInput of(String text) {
        return new HttpInput(new ByteArrayInputStream(text.getBytes(StandardCharsets.ISO_8859_1)));
    }

    @Override
    public int read() {
        return bytes.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        return bytes.read(b, off, Math.min(len, 1 + random.nextInt(most)));
    }
}
