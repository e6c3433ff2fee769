package io.stasis.network.linux.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * {@link Http1}: a kept-alive stream of requests with Content-Length, chunked and empty bodies,
 * delivered in arbitrary fragments, comes out request by request, bodies byte-exact, and the stream
 * stays in step; injected headers replace the sandbox's own; ambiguous framing is refused.
 */
class Http1FramingPropertiesTest {

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
    void aKeptAliveStreamComesOutRequestByRequest(@ForAll("streams") List<Request> requests, @ForAll @IntRange(min = 1, max = 97) int fragment)
            throws IOException {
        var wire = new ByteArrayOutputStream();
        for (Request r : requests) wire.writeBytes(r.wire());
        InputStream in = new Fragmenting(wire.toByteArray(), fragment);
        for (Request r : requests) {
            var head = Http1.readHead(in).orElseThrow();
            assertThat(head.method()).isEqualTo(r.method());
            var injected = head.with(Map.of("authorization", "Bearer injected"));
            assertThat(injected.values("Authorization")).containsExactly("Bearer injected");
            assertThat(new String(injected.bytes(), StandardCharsets.ISO_8859_1)).doesNotContain("sandbox-own").endsWith("\r\n\r\n");
            var body = new ByteArrayOutputStream();
            var framing = Http1.requestBody(head);
            Http1.copyBody(framing, in, body);
            if (r.chunked()) {
                assertThat(framing).isInstanceOf(Http1.Chunked.class);
                assertThat(dechunk(body.toByteArray())).isEqualTo(r.body());
            } else {
                assertThat(body.toByteArray()).isEqualTo(r.body());
            }
        }
        assertThat(Http1.readHead(in)).isEmpty();
    }

    @Test
    void responsesAreFramedByMethodStatusAndHeaders() throws IOException {
        assertThat(Http1.responseBody(head("HTTP/1.1 200 OK", "Content-Length: 5"), "HEAD")).isInstanceOf(Http1.None.class);
        assertThat(Http1.responseBody(head("HTTP/1.1 204 No Content"), "GET")).isInstanceOf(Http1.None.class);
        assertThat(Http1.responseBody(head("HTTP/1.1 304 Not Modified", "Content-Length: 5"), "GET")).isInstanceOf(Http1.None.class);
        assertThat(Http1.responseBody(head("HTTP/1.1 200 OK"), "GET")).isInstanceOf(Http1.UntilClose.class);
        assertThat(Http1.responseBody(head("HTTP/1.1 200 OK", "Content-Length: 5, 5"), "GET")).isEqualTo(new Http1.Fixed(5));
        assertThat(Http1.responseBody(head("HTTP/1.1 200 OK", "Transfer-Encoding: gzip, chunked"), "GET")).isInstanceOf(Http1.Chunked.class);
    }

    @Test
    void ambiguousOrBrokenFramingIsRefused() throws IOException {
        assertThatThrownBy(() -> Http1.requestBody(head("POST / HTTP/1.1", "Content-Length: 3", "Transfer-Encoding: chunked")))
                .isInstanceOf(Http1.FramingException.class);
        assertThatThrownBy(() -> Http1.requestBody(head("POST / HTTP/1.1", "Content-Length: 3", "Content-Length: 4")))
                .isInstanceOf(Http1.FramingException.class);
        assertThat(Http1.responseBody(head("HTTP/1.1 200 OK", "Transfer-Encoding: gzip"), "GET")).isInstanceOf(Http1.UntilClose.class);
        assertThatThrownBy(() -> Http1.requestBody(head("POST / HTTP/1.1", "Transfer-Encoding: gzip")))
                .isInstanceOf(Http1.FramingException.class);
        assertThatThrownBy(() -> Http1.requestBody(head("POST / HTTP/1.1", "Content-Length: -1")))
                .isInstanceOf(Http1.FramingException.class);
        assertThatThrownBy(() -> Http1.readHead(stream("GET / HTTP/1.1\nHost: a\n\n"))).isInstanceOf(Http1.FramingException.class);
        assertThatThrownBy(() -> Http1.readHead(stream("GET / HTTP/1.1\r\nBad Name: a\r\n\r\n"))).isInstanceOf(Http1.FramingException.class);
        assertThatThrownBy(() -> Http1.readHead(stream("GET / HTTP/1.1\r\n folded\r\n\r\n"))).isInstanceOf(Http1.FramingException.class);
        assertThatThrownBy(() -> Http1.copyBody(new Http1.Chunked(), stream("zz\r\n"), new ByteArrayOutputStream()))
                .isInstanceOf(Http1.FramingException.class);
    }

    @Test
    void theHostOfAHostHeader() {
        assertThat(InterceptingCarrier.hostPart("API.example.com:443")).isEqualTo("api.example.com");
        assertThat(InterceptingCarrier.hostPart("api.example.com.")).isEqualTo("api.example.com");
        assertThat(InterceptingCarrier.hostPart("[::1]:8443")).isEqualTo("::1");
    }

    private static Http1.Head head(String start, String... fields) throws IOException {
        return Http1.readHead(stream(start + "\r\n" + String.join("", Arrays.stream(fields).map(f -> f + "\r\n").toList()) + "\r\n"))
                .orElseThrow();
    }

    private static InputStream stream(String s) {
        return new ByteArrayInputStream(s.getBytes(StandardCharsets.ISO_8859_1));
    }

    /** The payload of a chunked body (extensions and trailers dropped). */
    private static byte[] dechunk(byte[] wire) {
        var out = new ByteArrayOutputStream();
        String text = new String(wire, StandardCharsets.ISO_8859_1);
        int at = 0;
        while (true) {
            int eol = text.indexOf("\r\n", at);
            String line = text.substring(at, eol);
            int semi = line.indexOf(';');
            int size = Integer.parseInt(semi < 0 ? line : line.substring(0, semi), 16);
            at = eol + 2;
            if (size == 0) return out.toByteArray();
            out.write(wire, at, size);
            at += size + 2;
        }
    }

    /** Hands out at most {@code fragment} bytes per read, as a TLS record stream might. */
    private static final class Fragmenting extends InputStream {
        private final byte[] data;
        private final int fragment;
        private int at;

        Fragmenting(byte[] data, int fragment) {
            this.data = data;
            this.fragment = fragment;
        }

        @Override
        public int read() {
            return at < data.length ? data[at++] & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (at >= data.length) return -1;
            int n = Math.min(Math.min(len, fragment), data.length - at);
            System.arraycopy(data, at, b, off, n);
            at += n;
            return n;
        }
    }
}
