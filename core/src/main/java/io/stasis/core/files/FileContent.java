package io.stasis.core.files;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;

/**
 * An open file to stream to a caller, and its size when opened. The stream ends at that size: a
 * file the sandbox was still writing may have grown since, and callers announce the size first (a
 * response's Content-Length, which one byte more broke). The caller closes it.
 */
public record FileContent(long size, InputStream stream) implements AutoCloseable {
    public FileContent {
        stream = new AtMost(stream, size);
    }

    @Override
    public void close() throws IOException {
        stream.close();
    }

    private static final class AtMost extends FilterInputStream {
        private long left;

        AtMost(InputStream in, long size) {
            super(in);
            this.left = size;
        }

        @Override
        public int read() throws IOException {
            if (left <= 0) return -1;
            int b = super.read();
            if (b >= 0) left--;
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            if (left <= 0) return -1;
            int n = super.read(buffer, offset, (int) Math.min(length, left));
            if (n > 0) left -= n;
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            long skipped = super.skip(Math.min(n, left));
            left -= skipped;
            return skipped;
        }

        @Override
        public int available() throws IOException {
            return (int) Math.min(super.available(), left);
        }
    }
}
