package io.stasis.server.s3;

import io.javalin.http.Context;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** A request's body as its signature says it is sent. */
final class S3Body {
    private S3Body() {
    }

    /** The request body as sent: checked against its SHA-256, or decoded from aws-chunked with each chunk's signature checked. */
    static InputStream of(Context ctx, S3Request r) throws IOException {
        InputStream raw = ctx.req().getInputStream();
        if (r.signed() == null) return raw;
        String hash = r.signed().payloadHash();
        return switch (hash) {
            case "UNSIGNED-PAYLOAD" -> raw;
            case "STREAMING-UNSIGNED-PAYLOAD-TRAILER" -> new AwsChunkedInputStream(raw, null);
            case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER" -> new AwsChunkedInputStream(raw, r.signed());
            default -> {
                if (!hash.matches("[0-9a-f]{64}")) throw new S3Error(400, "InvalidRequest", "x-amz-content-sha256 '" + hash + "' is not supported");
                yield new VerifiedInputStream(raw, hash);
            }
        };
    }

    /** A body checked against the SHA-256 the signed request announced: a mismatch fails the read at its end. */
    private static final class VerifiedInputStream extends FilterInputStream {
        private final MessageDigest digest;
        private final String expected;
        private boolean checked;

        VerifiedInputStream(InputStream in, String expected) {
            super(in);
            try {
                this.digest = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
            this.expected = expected;
        }

        @Override
        public int read() throws IOException {
            int c = in.read();
            if (c >= 0) digest.update((byte) c);
            else check();
            return c;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) digest.update(b, off, n);
            else if (n < 0) check();
            return n;
        }

        private void check() throws IOException {
            if (checked) return;
            checked = true;
            if (!HexFormat.of().formatHex(digest.digest()).equals(expected))
                throw new IOException("the body's SHA-256 is not the x-amz-content-sha256 that was signed");
        }
    }
}
