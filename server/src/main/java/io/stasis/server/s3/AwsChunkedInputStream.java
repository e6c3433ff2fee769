package io.stasis.server.s3;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * Decodes an {@code aws-chunked} body ({@code x-amz-content-sha256: STREAMING-...}), which the AWS
 * SDKs send for uploads: {@code <hex size>[;chunk-signature=<sig>]\r\n<data>\r\n}, ..., a zero-size
 * chunk, then optional trailer lines (a checksum) and an empty line. With signed chunks, each
 * chunk's signature is checked against the previous one (the first against the request's), so the
 * bytes are the ones the credential's holder sent; a mismatch ends the stream with an
 * {@link IOException}, and the write it feeds leaves nothing behind.
 */
final class AwsChunkedInputStream extends InputStream {
    private static final int MAX_CHUNK = 64 << 20;
    private final InputStream in;
    private final SigV4.Verified signed; // null: unsigned chunks
    private String previousSignature;
    private byte[] chunk = new byte[0];
    private int chunkLength;
    private int position;
    private boolean done;

    AwsChunkedInputStream(InputStream in, SigV4.Verified signed) {
        this.in = in;
        this.signed = signed;
        this.previousSignature = signed == null ? null : signed.signature();
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if (len == 0) return 0;
        while (position == chunkLength) {
            if (done) return -1;
            nextChunk();
        }
        int n = Math.min(len, chunkLength - position);
        System.arraycopy(chunk, position, b, off, n);
        position += n;
        return n;
    }

    private void nextChunk() throws IOException {
        String header = line();
        String sizeHex = header;
        String signature = null;
        int semi = header.indexOf(';');
        if (semi >= 0) {
            sizeHex = header.substring(0, semi);
            String ext = header.substring(semi + 1);
            if (ext.startsWith("chunk-signature=")) signature = ext.substring("chunk-signature=".length());
        }
        int size;
        try {
            size = Integer.parseInt(sizeHex.strip(), 16);
        } catch (NumberFormatException e) {
            throw new IOException("malformed aws-chunked body: chunk header '" + header + "'");
        }
        if (size < 0 || size > MAX_CHUNK) throw new IOException("aws-chunked chunk of " + size + " bytes refused");
        if (chunk.length < size) chunk = new byte[size];
        int read = in.readNBytes(chunk, 0, size);
        if (read != size) throw new IOException("the aws-chunked body ended inside a chunk");
        if (signed != null) {
            if (signature == null) throw new IOException("a chunk has no chunk-signature");
            String expected = SigV4.chunkSignature(signed, previousSignature, chunk, size);
            if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), signature.getBytes(StandardCharsets.US_ASCII)))
                throw new IOException("a chunk's signature does not match");
            previousSignature = expected;
        }
        chunkLength = size;
        position = 0;
        if (size == 0) {
            done = true;
            // Trailers (e.g. x-amz-checksum-crc32, x-amz-trailer-signature) until an empty line or the end.
            while (true) {
                String trailer = lineOrEnd();
                if (trailer == null || trailer.isEmpty()) break;
            }
        } else if (!line().isEmpty()) {
            throw new IOException("malformed aws-chunked body: no CRLF after a chunk");
        }
    }

    private String line() throws IOException {
        String line = lineOrEnd();
        if (line == null) throw new IOException("the aws-chunked body ended early");
        return line;
    }

    private String lineOrEnd() throws IOException {
        var out = new ByteArrayOutputStream();
        while (true) {
            int c = in.read();
            if (c < 0) return out.size() == 0 ? null : out.toString(StandardCharsets.US_ASCII);
            if (c == '\n') {
                String s = out.toString(StandardCharsets.US_ASCII);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            if (out.size() > 4096) throw new IOException("an aws-chunked line is too long");
            out.write(c);
        }
    }
}
