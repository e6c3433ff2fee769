package io.stasis.server.preview;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The proxy's framing: a body is relayed exactly, to its last byte and not one further, however
 * the bytes arrive; heads of any bytes either parse or fail with {@link HttpFramingException}.
 */
class PreviewFramingPropertyTest {
    private static final byte[] NEXT = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    /** Returns at most a few bytes per read, the counts drawn from a seed: a body split at random points. */
    private static final class Trickle extends FilterInputStream {
        private final Random random;

        Trickle(byte[] bytes, long seed) {
            super(new ByteArrayInputStream(bytes));
            random = new Random(seed);
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return super.read(b, off, Math.min(len, 1 + random.nextInt(7)));
        }
    }

    @Property(tries = 300)
    void chunkedBodiesAreRelayedExactlyAndNoFurther(@ForAll("chunks") List<byte[]> chunks, @ForAll boolean extensions,
                                                    @ForAll boolean trailers, @ForAll long seed) throws Exception {
        var wire = new ByteArrayOutputStream();
        var body = new ByteArrayOutputStream();
        for (byte[] chunk : chunks) {
            wire.write((Integer.toHexString(chunk.length).toUpperCase() + (extensions ? ";name=\"v\"" : "") + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            wire.write(chunk);
            wire.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            body.write(chunk);
        }
        wire.write(("0\r\n" + (trailers ? "X-Checksum: 1\r\n" : "") + "\r\n").getBytes(StandardCharsets.US_ASCII));
        wire.write(NEXT);
        var in = new Trickle(wire.toByteArray(), seed);
        var out = new ByteArrayOutputStream();

        BodyRelay.copy(BodyFraming.CHUNKED, in, out, 400);

        assertThat(dechunk(out.toByteArray())).isEqualTo(body.toByteArray());
        assertThat(in.readAllBytes()).isEqualTo(NEXT);
    }

    @Property(tries = 200)
    void lengthBodiesAreRelayedExactlyAndNoFurther(@ForAll @Size(max = 5000) byte[] body, @ForAll long seed) throws Exception {
        var wire = new ByteArrayOutputStream();
        wire.write(body);
        wire.write(NEXT);
        var in = new Trickle(wire.toByteArray(), seed);
        var out = new ByteArrayOutputStream();

        BodyRelay.copy(body.length == 0 ? BodyFraming.NONE : new BodyFraming.Length(body.length), in, out, 400);

        assertThat(out.toByteArray()).isEqualTo(body);
        assertThat(in.readAllBytes()).isEqualTo(NEXT);
    }

    @Property(tries = 300)
    void aChunkedBodyCutShortIsAFramingFault(@ForAll("chunks") List<byte[]> chunks, @ForAll @IntRange(min = 1, max = 1000) int cut) {
        var wire = new ByteArrayOutputStream();
        for (byte[] chunk : chunks) {
            wire.writeBytes((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            wire.writeBytes(chunk);
            wire.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        wire.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        byte[] all = wire.toByteArray();
        byte[] truncated = Arrays.copyOf(all, Math.max(0, all.length - Math.min(cut, all.length)));
        try {
            BodyRelay.copy(BodyFraming.CHUNKED, new ByteArrayInputStream(truncated), OutputStream.nullOutputStream(), 400);
            throw new AssertionError("a truncated body was taken as complete");
        } catch (HttpFramingException expected) {
            assertThat(expected.status()).isEqualTo(400);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Property(tries = 1000)
    void headParserOnlyEverFailsWithItsOwnException(@ForAll("garbage") byte[] bytes) throws IOException {
        try {
            HeadReader.readRequest(new ByteArrayInputStream(bytes));
        } catch (HttpFramingException expected) {
            assertThat(expected.status()).isIn(400, 431);
        }
        try {
            HeadReader.readResponse(new ByteArrayInputStream(bytes));
        } catch (HttpFramingException expected) {
            assertThat(expected.status()).isEqualTo(502);
        }
    }

    @Property(tries = 300)
    void aValidHeadParsesWithItsFieldsAndLeavesTheBody(@ForAll("fieldValues") List<String> values, @ForAll long seed) throws Exception {
        var text = new StringBuilder("POST /a/b?c=d HTTP/1.1\r\n");
        for (int i = 0; i < values.size(); i++) text.append("X-F").append(i).append(":  ").append(values.get(i)).append(" \r\n");
        text.append("\r\nBODY");
        var in = new Trickle(text.toString().getBytes(StandardCharsets.ISO_8859_1), seed);

        var head = HeadReader.readRequest(new BufferedInputStream(in, 1));

        assertThat(head.method()).isEqualTo("POST");
        assertThat(head.target()).isEqualTo("/a/b?c=d");
        for (int i = 0; i < values.size(); i++) assertThat(head.headers().first("x-f" + i)).contains(values.get(i).strip());
        assertThat(new String(in.readAllBytes(), StandardCharsets.US_ASCII)).isEqualTo("BODY");
    }

    @Provide
    Arbitrary<List<byte[]>> chunks() {
        return Arbitraries.bytes().array(byte[].class).ofMinSize(1).ofMaxSize(3000).list().ofMaxSize(12);
    }

    @Provide
    Arbitrary<List<String>> fieldValues() {
        return Arbitraries.strings().withChars("abcXYZ019 ;=,/\"\t").ofMaxLength(40).list().ofMaxSize(8);
    }

    /** Random bytes, and valid heads with random bytes put in, cut off or repeated. */
    @Provide
    Arbitrary<byte[]> garbage() {
        var random = Arbitraries.bytes().array(byte[].class).ofMaxSize(400);
        var valid = Arbitraries.of("GET / HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                "POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n");
        var mutated = Combinators.combine(valid, Arbitraries.integers().between(0, 60), Arbitraries.bytes(), Arbitraries.integers().between(0, 3))
                .as((text, at, b, how) -> {
                    byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
                    int i = Math.min(at, bytes.length);
                    return switch (how) {
                        case 0 -> Arrays.copyOf(bytes, i);
                        case 1 -> {
                            byte[] copy = bytes.clone();
                            if (i < copy.length) copy[i] = b;
                            yield copy;
                        }
                        case 2 -> ("GET / HTTP/1.1\r\nX: " + "a".repeat(70_000) + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
                        default -> {
                            var list = new ArrayList<Byte>();
                            for (byte x : bytes) list.add(x);
                            list.add(i, b);
                            byte[] out = new byte[list.size()];
                            for (int k = 0; k < out.length; k++) out[k] = list.get(k);
                            yield out;
                        }
                    };
                });
        return Arbitraries.oneOf(random, mutated);
    }

    /** Decodes a chunked body (the relay's output: plain size lines, CRLF everywhere). */
    static byte[] dechunk(byte[] wire) {
        var body = new ByteArrayOutputStream();
        int at = 0;
        while (true) {
            int eol = indexOf(wire, at);
            int size = Integer.parseInt(new String(wire, at, eol - at, StandardCharsets.US_ASCII), 16);
            at = eol + 2;
            if (size == 0) break;
            body.write(wire, at, size);
            at += size + 2;
        }
        return body.toByteArray();
    }

    private static int indexOf(byte[] wire, int from) {
        for (int i = from; i + 1 < wire.length; i++) if (wire[i] == '\r' && wire[i + 1] == '\n') return i;
        throw new AssertionError("no CRLF after " + from);
    }
}
