package io.stasis.http1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link BodyFraming} (RFC 9112 section 6.3) and {@link BodyRelay}'s chunked re-framing. */
class BodyFramingTest {

    @Test
    void requestsAreFramedByTheirHeaders() throws IOException {
        assertThat(BodyFraming.ofRequest(request("GET / HTTP/1.1"))).isEqualTo(BodyFraming.NONE);
        assertThat(BodyFraming.ofRequest(request("POST / HTTP/1.1", "Content-Length: 0"))).isEqualTo(BodyFraming.NONE);
        assertThat(BodyFraming.ofRequest(request("POST / HTTP/1.1", "Content-Length: 5"))).isEqualTo(new BodyFraming.Length(5));
        assertThat(BodyFraming.ofRequest(request("POST / HTTP/1.1", "Content-Length: 5, 5", "Content-Length: 5"))).isEqualTo(new BodyFraming.Length(5));
        assertThat(BodyFraming.ofRequest(request("POST / HTTP/1.1", "Transfer-Encoding: gzip, Chunked"))).isEqualTo(BodyFraming.CHUNKED);
        assertThat(BodyFraming.ofRequest(request("POST / HTTP/1.1", "Transfer-Encoding: gzip", "Transfer-Encoding: chunked"))).isEqualTo(BodyFraming.CHUNKED);
    }

    @Test
    void responsesAreFramedByMethodStatusAndHeaders() throws IOException {
        assertThat(BodyFraming.ofResponse("HEAD", response("HTTP/1.1 200 OK", "Content-Length: 5"))).isEqualTo(BodyFraming.NONE);
        assertThat(BodyFraming.ofResponse("GET", response("HTTP/1.1 204 No Content"))).isEqualTo(BodyFraming.NONE);
        assertThat(BodyFraming.ofResponse("GET", response("HTTP/1.1 304 Not Modified", "Content-Length: 5"))).isEqualTo(BodyFraming.NONE);
        assertThat(BodyFraming.ofResponse("GET", response("HTTP/1.1 100 Continue"))).isEqualTo(BodyFraming.NONE);
        assertThat(BodyFraming.ofResponse("GET", response("HTTP/1.1 200 OK"))).isEqualTo(BodyFraming.UNTIL_CLOSE);
        assertThat(BodyFraming.ofResponse("CONNECT", response("HTTP/1.1 200 OK", "Content-Length: 5"))).isEqualTo(BodyFraming.UNTIL_CLOSE);
        assertThat(BodyFraming.ofResponse("GET", response("HTTP/1.1 200 OK", "Content-Length: 5, 5"))).isEqualTo(new BodyFraming.Length(5));
        assertThat(BodyFraming.ofResponse("GET", response("HTTP/1.1 200 OK", "Content-Length: 0"))).isEqualTo(BodyFraming.NONE);
        assertThat(BodyFraming.ofResponse("GET", response("HTTP/1.1 200 OK", "Transfer-Encoding: gzip, chunked"))).isEqualTo(BodyFraming.CHUNKED);
        assertThat(BodyFraming.ofResponse("GET", response("HTTP/1.1 200 OK", "Transfer-Encoding: gzip"))).isEqualTo(BodyFraming.UNTIL_CLOSE);
    }

    @Test
    void ambiguousRequestFramingIsRefused() {
        for (var head : List.of(
                List.of("POST / HTTP/1.1", "Content-Length: 3", "Transfer-Encoding: chunked"),
                List.of("POST / HTTP/1.1", "Transfer-Encoding: chunked", "Content-Length: 0"),
                List.of("POST / HTTP/1.1", "Content-Length: 3", "Content-Length: 4"),
                List.of("POST / HTTP/1.1", "Content-Length: 3, 4"),
                List.of("POST / HTTP/1.1", "Content-Length: 3,"),
                List.of("POST / HTTP/1.1", "Content-Length: -1"),
                List.of("POST / HTTP/1.1", "Content-Length: +1"),
                List.of("POST / HTTP/1.1", "Content-Length: 0x10"),
                List.of("POST / HTTP/1.1", "Content-Length: 9999999999999999999"),
                List.of("POST / HTTP/1.1", "Transfer-Encoding: gzip"),
                List.of("POST / HTTP/1.1", "Transfer-Encoding: chunked, gzip"),
                List.of("POST / HTTP/1.1", "Transfer-Encoding: chunked, chunked"),
                List.of("POST / HTTP/1.0", "Transfer-Encoding: chunked")))
            assertThatThrownBy(() -> BodyFraming.ofRequest(request(head.getFirst(), head.subList(1, head.size()).toArray(String[]::new))))
                    .as(head.toString()).isInstanceOfSatisfying(HttpFramingException.class, e -> assertThat(e.status()).isEqualTo(400));
    }

    /** Transfer-Encoding with Content-Length is refused in a response too (the preview proxy used to drop the length). */
    @Test
    void ambiguousResponseFramingIsRefused() {
        for (var head : List.of(
                List.of("HTTP/1.1 200 OK", "Content-Length: 3", "Transfer-Encoding: chunked"),
                List.of("HTTP/1.1 200 OK", "Content-Length: 3", "Content-Length: 4"),
                List.of("HTTP/1.1 200 OK", "Content-Length: x"),
                List.of("HTTP/1.1 200 OK", "Transfer-Encoding: chunked, gzip, chunked"),
                List.of("HTTP/1.0 200 OK", "Transfer-Encoding: chunked")))
            assertThatThrownBy(() -> BodyFraming.ofResponse("GET", response(head.getFirst(), head.subList(1, head.size()).toArray(String[]::new))))
                    .as(head.toString()).isInstanceOfSatisfying(HttpFramingException.class, e -> assertThat(e.status()).isEqualTo(502));
    }

    /** Extensions are dropped and size lines written plainly (the egress proxy used to copy them through). */
    @Test
    void chunkedBodiesAreReframed() throws IOException {
        assertThat(relayChunked("5\r\nhello\r\n007;ext=1;b=\"x\"\r\n, world\r\nA \t;e\r\n0123456789\r\n0;last\r\nX-Sum:  1 \r\nY: 2\r\n\r\nNEXT"))
                .isEqualTo("5\r\nhello\r\n7\r\n, world\r\na\r\n0123456789\r\n0\r\nX-Sum: 1\r\nY: 2\r\n\r\n");
    }

    @Test
    void malformedChunkedBodiesAreRefused() {
        for (String body : List.of(
                "zz\r\n",
                "\r\n",
                ";ext\r\n",
                " 5\r\nhello\r\n0\r\n\r\n",
                "5 \r\nhello\r\n0\r\n\r\n",
                "+5\r\nhello\r\n0\r\n\r\n",
                "5x\r\nhello\r\n0\r\n\r\n",
                "1000000000000000\r\n",
                "5\nhello\r\n0\r\n\r\n",
                "5\r\nhello\n0\r\n\r\n",
                "5\r\nhello\r\n0\n\n",
                "5\r\nhello\r\n0\r\nX: 1\n\r\n",
                "5\r\nhello!\r\n0\r\n\r\n",
                "5\r\nhello\r\n0\r\n folded\r\n\r\n",
                "5\r\nhello\r\n0\r\nNo colon\r\n\r\n",
                "5;" + "e".repeat(BodyRelay.MAX_CHUNK_LINE) + "\r\nhello\r\n0\r\n\r\n",
                "5\r\nhel"))
            assertThatThrownBy(() -> relayChunked(body)).as(body)
                    .isInstanceOfSatisfying(HttpFramingException.class, e -> assertThat(e.status()).isEqualTo(502));
    }

    @Test
    void aBodyShorterThanItsLengthIsAFault() {
        assertThatThrownBy(() -> BodyRelay.copy(new BodyFraming.Length(10), Fragmenting.of("short"), new ByteArrayOutputStream(), 400))
                .isInstanceOfSatisfying(HttpFramingException.class, e -> assertThat(e.status()).isEqualTo(400));
    }

    @Test
    void aBodyUntilCloseIsEverythingLeft() throws IOException {
        var out = new ByteArrayOutputStream();
        BodyRelay.copy(BodyFraming.UNTIL_CLOSE, Fragmenting.of("all of it\r\n\r\nand more"), out, 502);
        assertThat(out.toString(StandardCharsets.ISO_8859_1)).isEqualTo("all of it\r\n\r\nand more");
    }

    private static String relayChunked(String body) throws IOException {
        var out = new ByteArrayOutputStream();
        var in = Fragmenting.of(body.getBytes(StandardCharsets.ISO_8859_1), 1, 5);
        BodyRelay.copy(BodyFraming.CHUNKED, in, out, 502);
        return out.toString(StandardCharsets.ISO_8859_1);
    }

    private static RequestHead request(String line, String... fields) throws IOException {
        return HeadReader.readRequest(Fragmenting.of(line + "\r\n" + String.join("", Arrays.stream(fields).map(f -> f + "\r\n").toList()) + "\r\n"));
    }

    private static ResponseHead response(String line, String... fields) throws IOException {
        return HeadReader.readResponse(Fragmenting.of(line + "\r\n" + String.join("", Arrays.stream(fields).map(f -> f + "\r\n").toList()) + "\r\n"));
    }
}
