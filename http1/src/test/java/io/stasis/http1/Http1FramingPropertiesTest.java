package io.stasis.http1;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * The framing as properties: a kept-alive stream of requests comes out request by request, bodies
 * byte-exact and relayed to their last byte and not one further, however the bytes arrive; chunked
 * bodies come out re-framed; a body cut short and heads of any bytes fail only with
 * {@link HttpFramingException}.
 */
class Http1FramingPropertiesTest {
    private static final byte[] NEXT = "GET /next HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    record Request(String method, String path, byte[] body, boolean chunked, List<Integer> chunkSizes) {
        byte[] wire() {
            var out = new ByteArrayOutputStream();
            var head = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: api.example.com\r\nAuthorization: sandbox-own\r\n");
            if (chunked) head.append("Transfer-Encoding: chunked\r\n");
            else if (body.length > 0) head.append("Content-Length: ").append(body.length).append("\r\n");
            out.writeBytes((head + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            if (chunked) {
                int at = 0;
                for (int size : chunkSizes) {
                    int n = Math.min(size, body.length - at);
                    if (n <= 0) break;
                    out.writeBytes((Integer.toHexString(n) + ";ext=1\r\n").getBytes(StandardCharsets.ISO_8859_1));
                    out.write(body, at, n);
                    out.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
                    at += n;
                }
                if (at < body.length) {
                    out.writeBytes((Integer.toHexString(body.length - at) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
                    out.write(body, at, body.length - at);
                    out.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
                }
                out.writeBytes("0\r\nX-Trailer: t\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            } else {
                out.writeBytes(body);
            }
            return out.toByteArray();
        }
    }

    @Provide
    Arbitrary<List<Request>> streams() {
        Arbitrary<Request> one = Combinators.combine(
                Arbitraries.of("GET", "POST", "PUT", "DELETE"),
                Arbitraries.strings().withCharRange('a', 'z').ofMinLength(1).ofMaxLength(12).map(s -> "/" + s),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(3000),
                Arbitraries.of(true, false),
                Arbitraries.integers().between(1, 700).list().ofMinSize(1).ofMaxSize(6))
                .as(Request::new);
        return one.list().ofMinSize(1).ofMaxSize(6);
    }

    @Property(tries = 300)
    void aKeptAliveStreamComesOutRequestByRequest(@ForAll("streams") List<Request> requests, @ForAll @IntRange(min = 1, max = 97) int fragment,
                                                  @ForAll long seed) throws IOException {
        var wire = new ByteArrayOutputStream();
        for (Request r : requests) wire.writeBytes(r.wire());
        var in = Fragmenting.of(wire.toByteArray(), seed, fragment);
        for (Request r : requests) {
            var head = HeadReader.readRequest(in);
            assertThat(head.method()).isEqualTo(r.method());
            assertThat(head.target()).isEqualTo(r.path());
            head.headers().set("authorization", "Bearer injected");
            assertThat(head.headers().all("Authorization")).containsExactly("Bearer injected");
            assertThat(new String(head.toBytes(), StandardCharsets.ISO_8859_1)).doesNotContain("sandbox-own").endsWith("\r\n\r\n");
            var body = new ByteArrayOutputStream();
            var framing = BodyFraming.ofRequest(head);
            BodyRelay.copy(framing, in, body, 400);
            if (r.chunked()) {
                assertThat(framing).isEqualTo(BodyFraming.CHUNKED);
                assertThat(new String(body.toByteArray(), StandardCharsets.ISO_8859_1)).doesNotContain(";ext=1").endsWith("0\r\nX-Trailer: t\r\n\r\n");
                assertThat(dechunk(body.toByteArray())).isEqualTo(r.body());
            } else {
                assertThat(body.toByteArray()).isEqualTo(r.body());
            }
        }
        assertThat(HeadReader.readRequest(in)).isNull();
    }

    @Property(tries = 300)
    void chunkedBodiesAreRelayedExactlyAndNoFurther(@ForAll("chunks") List<byte[]> chunks, @ForAll boolean extensions,
                                                    @ForAll boolean trailers, @ForAll long seed) throws Exception {
        var wire = new ByteArrayOutputStream();
        var body = new ByteArrayOutputStream();
        for (byte[] chunk : chunks) {
            wire.write((Integer.toHexString(chunk.length).toUpperCase() + (extensions ? " ;name=\"v\"" : "") + "\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            wire.write(chunk);
            wire.write("\r\n".getBytes(StandardCharsets.US_ASCII));
            body.write(chunk);
        }
        wire.write(("0\r\n" + (trailers ? "X-Checksum:1\r\n" : "") + "\r\n").getBytes(StandardCharsets.US_ASCII));
        wire.write(NEXT);
        var in = Fragmenting.of(wire.toByteArray(), seed, 7);
        var out = new ByteArrayOutputStream();

        BodyRelay.copy(BodyFraming.CHUNKED, in, out, 400);

        assertThat(dechunk(out.toByteArray())).isEqualTo(body.toByteArray());
        assertThat(new String(out.toByteArray(), StandardCharsets.ISO_8859_1)).endsWith("0\r\n" + (trailers ? "X-Checksum: 1\r\n" : "") + "\r\n");
        assertThat(in.readAllBytes()).isEqualTo(NEXT);
    }

    @Property(tries = 200)
    void lengthBodiesAreRelayedExactlyAndNoFurther(@ForAll @Size(max = 5000) byte[] body, @ForAll long seed) throws Exception {
        var wire = new ByteArrayOutputStream();
        wire.write(body);
        wire.write(NEXT);
        var in = Fragmenting.of(wire.toByteArray(), seed, 7);
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
            BodyRelay.copy(BodyFraming.CHUNKED, new HttpInput(new ByteArrayInputStream(truncated)), OutputStream.nullOutputStream(), 400);
            throw new AssertionError("a truncated body was taken as complete");
        } catch (HttpFramingException expected) {
            assertThat(expected.status()).isEqualTo(400);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @Property(tries = 1000)
    void headsOfAnyBytesOnlyEverFailWithAFramingFault(@ForAll("garbage") byte[] bytes) throws IOException {
        try {
            HeadReader.readRequest(new HttpInput(new ByteArrayInputStream(bytes)));
        } catch (HttpFramingException expected) {
            assertThat(expected.status()).isIn(400, 431);
        }
        try {
            HeadReader.readResponse(new HttpInput(new ByteArrayInputStream(bytes)));
        } catch (HttpFramingException expected) {
            assertThat(expected.status()).isEqualTo(502);
        }
    }

    @Property(tries = 300)
    void aValidHeadParsesWithItsFieldsAndLeavesTheBody(@ForAll("fieldValues") List<String> values, @ForAll long seed) throws Exception {
        var text = new StringBuilder("POST /a/b?c=d HTTP/1.1\r\n");
        for (int i = 0; i < values.size(); i++) text.append("X-F").append(i).append(":  ").append(values.get(i)).append(" \r\n");
        text.append("\r\nBODY");
        var in = Fragmenting.of(text.toString().getBytes(StandardCharsets.ISO_8859_1), seed, 7);

        var head = HeadReader.readRequest(in);

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

    /** Decodes a re-framed chunked body: plain size lines (no extensions), CRLF everywhere. */
    static byte[] dechunk(byte[] wire) {
        var body = new ByteArrayOutputStream();
        int at = 0;
        while (true) {
            int eol = indexOfCrlf(wire, at);
            int size = Integer.parseInt(new String(wire, at, eol - at, StandardCharsets.US_ASCII), 16);
            at = eol + 2;
            if (size == 0) break;
            body.write(wire, at, size);
            at += size + 2;
        }
        return body.toByteArray();
    }

    private static int indexOfCrlf(byte[] wire, int from) {
        for (int i = from; i + 1 < wire.length; i++) if (wire[i] == '\r' && wire[i + 1] == '\n') return i;
        throw new AssertionError("no CRLF after " + from);
    }
}
