package io.stasis.templates.oci;

import com.github.luben.zstd.ZstdInputStream;
import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;

/**
 * How a layer or archive is compressed, told by its first bytes (media types are sometimes
 * wrong): gzip, zstd or none. The only class that decompresses.
 */
public enum Compression {
    NONE, GZIP, ZSTD;

    /** Detects the compression of {@code in} (which must support mark/reset) without consuming it. */
    static Compression detect(InputStream in, String subject) {
        try {
            in.mark(4);
            byte[] magic = in.readNBytes(4);
            in.reset();
            if (magic.length >= 2 && (magic[0] & 0xff) == 0x1f && (magic[1] & 0xff) == 0x8b) return GZIP;
            if (magic.length == 4 && (magic[0] & 0xff) == 0x28 && (magic[1] & 0xff) == 0xb5 && (magic[2] & 0xff) == 0x2f
                    && (magic[3] & 0xff) == 0xfd) return ZSTD;
            return NONE;
        } catch (IOException e) {
            throw ImageException.io(subject, "reading failed: " + e.getMessage(), e);
        }
    }

    /**
     * {@code raw} decompressed as its first bytes say. Corrupt compressed data is an
     * {@link ImageException} ({@code malformed}) naming {@code subject}, raised as it is read.
     */
    static InputStream decompressed(InputStream raw, String subject) {
        var buffered = new BufferedInputStream(raw, 64 * 1024);
        Compression kind = detect(buffered, subject);
        try {
            InputStream plain = switch (kind) {
                case NONE -> buffered;
                case GZIP -> new GZIPInputStream(buffered, 64 * 1024);
                case ZSTD -> zstd(buffered, subject);
            };
            return kind == NONE ? plain : new Failing(plain, subject, kind);
        } catch (IOException e) {
            throw ImageException.malformed(subject, "not valid " + kind.name().toLowerCase(java.util.Locale.ROOT) + " data: " + e.getMessage(), e);
        }
    }

    private static InputStream zstd(InputStream in, String subject) throws IOException {
        try {
            return new ZstdInputStream(in);
        } catch (LinkageError e) {
            throw ImageException.unsupported(subject, "zstd-compressed, and zstd's native library cannot be loaded here: " + e);
        }
    }

    /** Turns the decompressor's IOExceptions into {@link ImageException}s naming the blob. */
    private static final class Failing extends FilterInputStream {
        private final String subject;
        private final Compression kind;

        Failing(InputStream in, String subject, Compression kind) {
            super(in);
            this.subject = subject;
            this.kind = kind;
        }

        @Override
        public int read() {
            try {
                return in.read();
            } catch (IOException e) {
                throw corrupt(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) {
            try {
                return in.read(b, off, len);
            } catch (IOException e) {
                throw corrupt(e);
            }
        }

        @Override
        public long skip(long n) {
            try {
                return in.skip(n);
            } catch (IOException e) {
                throw corrupt(e);
            }
        }

        @Override
        public void close() throws IOException {
            in.close();
        }

        private ImageException corrupt(IOException e) {
            return ImageException.malformed(subject, "corrupt " + kind.name().toLowerCase(java.util.Locale.ROOT) + " data: " + e.getMessage(), e);
        }
    }
}
