package io.stasis.http1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link HeadReader}: what a head is, what is refused and with which status. */
class HeadReaderTest {

    @Test
    void readsARequestHead() throws IOException {
        var head = HeadReader.readRequest(Fragmenting.of("POST /a?b=c HTTP/1.0\r\nHost: x\r\nX-Many:  one, two \r\nx-many: three\r\n\r\n"));

        assertThat(head.method()).isEqualTo("POST");
        assertThat(head.target()).isEqualTo("/a?b=c");
        assertThat(head.isHttp10()).isTrue();
        assertThat(head.headers().all("X-MANY")).containsExactly("one, two", "three");
        assertThat(head.headers().tokens("x-many")).containsExactly("one", "two", "three");
        assertThat(new String(head.toBytes())).isEqualTo("POST /a?b=c HTTP/1.0\r\nHost: x\r\nX-Many: one, two\r\nx-many: three\r\n\r\n");
    }

    @Test
    void readsAResponseHead() throws IOException {
        var head = HeadReader.readResponse(Fragmenting.of("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"));
        assertThat(head.status()).isEqualTo(404);
        assertThat(head.reason()).isEqualTo("Not Found");
        assertThat(HeadReader.readResponse(Fragmenting.of("HTTP/1.1 204\r\n\r\n")).reason()).isEmpty();
        assertThat(HeadReader.readResponse(Fragmenting.of("HTTP/1.1 100 Continue\r\n\r\n")).isInterim()).isTrue();
        assertThat(HeadReader.readResponse(Fragmenting.of("HTTP/1.1 101 Switching Protocols\r\n\r\n")).isInterim()).isFalse();
    }

    @Test
    void aCleanEndBeforeAHeadIsNoHead() throws IOException {
        assertThat(HeadReader.readRequest(Fragmenting.of(""))).isNull();
        assertThat(HeadReader.readResponse(Fragmenting.of(""))).isNull();
    }

    @Test
    void emptyLinesBeforeARequestAreSkippedButNotBeforeAResponse() throws IOException {
        assertThat(HeadReader.readRequest(Fragmenting.of("\r\n\r\nGET / HTTP/1.1\r\n\r\n")).target()).isEqualTo("/");
        assertThatThrownBy(() -> HeadReader.readResponse(Fragmenting.of("\r\nHTTP/1.1 200 OK\r\n\r\n")))
                .isInstanceOf(HttpFramingException.class);
    }

    /** A bare LF ends no line (the preview proxy used to accept it; see the package's documentation). */
    @Test
    void aBareLfOrCrIsRefused() {
        for (String head : List.of("GET / HTTP/1.1\nHost: a\n\n", "GET / HTTP/1.1\r\nHost: a\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\n",
                "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", "\nGET / HTTP/1.1\r\n\r\n"))
            assertThatThrownBy(() -> HeadReader.readRequest(Fragmenting.of(head))).as(head)
                    .isInstanceOfSatisfying(HttpFramingException.class, e -> assertThat(e.status()).isEqualTo(400));
        assertThatThrownBy(() -> HeadReader.readResponse(Fragmenting.of("HTTP/1.1 200 OK\nContent-Length: 0\n\n")))
                .isInstanceOfSatisfying(HttpFramingException.class, e -> assertThat(e.status()).isEqualTo(502));
    }

    @Test
    void malformedHeadsAreRefused() {
        for (String head : List.of(
                "GET / HTTP/1.1\r\nBad Name: a\r\n\r\n",
                "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
                "GET / HTTP/1.1\r\n folded\r\n\r\n",
                "GET / HTTP/1.1\r\nX: y\r\n\tfolded\r\n\r\n",
                "GET / HTTP/1.1\r\n: no name\r\n\r\n",
                "GET / HTTP/1.1\r\nX: a\u0000b\r\n\r\n",
                "GET / HTTP/1.1\r\nX: a\u007fb\r\n\r\n",
                "GET /  HTTP/1.1\r\n\r\n",
                "GET / HTTP/2.0\r\n\r\n",
                "G(T / HTTP/1.1\r\n\r\n",
                "GET  HTTP/1.1\r\n\r\n",
                "GET /\r\n\r\n",
                "GET / HTTP/1.1\r\nHost: a\r\n"))
            assertThatThrownBy(() -> HeadReader.readRequest(Fragmenting.of(head))).as(head)
                    .isInstanceOfSatisfying(HttpFramingException.class, e -> assertThat(e.status()).isEqualTo(400));
        for (String head : List.of("HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/2 200 OK\r\n\r\n", "ICY 200 OK\r\n\r\n",
                "HTTP/1.1 099 Low\r\n\r\n", "HTTP/1.1 200 OK\r\nBad Name: a\r\n\r\n"))
            assertThatThrownBy(() -> HeadReader.readResponse(Fragmenting.of(head))).as(head)
                    .isInstanceOfSatisfying(HttpFramingException.class, e -> assertThat(e.status()).isEqualTo(502));
    }

    @Test
    void obsTextAndTabsInValuesPass() throws IOException {
        var head = HeadReader.readRequest(Fragmenting.of("GET / HTTP/1.1\r\nX: caf\u00e9\tau lait\r\n\r\n"));
        assertThat(head.headers().first("X")).contains("caf\u00e9\tau lait");
    }

    @Test
    void headsAreBoundedInLineLengthFieldCountAndSize() throws IOException {
        String longest = "X: " + "a".repeat(HeadReader.MAX_LINE_BYTES - 3);
        assertThat(HeadReader.readRequest(Fragmenting.of("GET / HTTP/1.1\r\n" + longest + "\r\n\r\n")).headers().size()).isEqualTo(1);
        assertStatus("GET / HTTP/1.1\r\n" + longest + "a\r\n\r\n", 431);
        assertStatus("GET / HTTP/1.1\r\nX: " + "a".repeat(70_000) + "\r\n\r\n", 431);
        assertStatus("GET /" + "a".repeat(HeadReader.MAX_LINE_BYTES) + " HTTP/1.1\r\n\r\n", 431);

        var fields = new StringBuilder("GET / HTTP/1.1\r\n");
        for (int i = 0; i < HeadReader.MAX_FIELDS; i++) fields.append("X-").append(i).append(": v\r\n");
        assertThat(HeadReader.readRequest(Fragmenting.of(fields + "\r\n")).headers().size()).isEqualTo(HeadReader.MAX_FIELDS);
        assertStatus(fields + "One-More: v\r\n\r\n", 431);

        var large = new StringBuilder("GET / HTTP/1.1\r\n");
        for (int i = 0; large.length() < HeadReader.MAX_HEAD_BYTES; i++) large.append("X-").append(i).append(": ").append("v".repeat(1000)).append("\r\n");
        assertStatus(large + "\r\n", 431);
        assertThatThrownBy(() -> HeadReader.readResponse(Fragmenting.of("HTTP/1.1 200 OK\r\nX: " + "a".repeat(70_000) + "\r\n\r\n")))
                .isInstanceOfSatisfying(HttpFramingException.class, e -> assertThat(e.status()).isEqualTo(502));
    }

    @Test
    void headersNameButNeverShowTheirValues() throws IOException {
        var head = HeadReader.readRequest(Fragmenting.of("GET / HTTP/1.1\r\nAuthorization: Bearer secret\r\n\r\n"));
        assertThat(head.headers()).hasToString("[Authorization]");
        assertThat(head.toString()).doesNotContain("secret");
    }

    private static void assertStatus(String head, int status) {
        assertThatThrownBy(() -> HeadReader.readRequest(Fragmenting.of(head)))
                .isInstanceOfSatisfying(HttpFramingException.class, e -> assertThat(e.status()).isEqualTo(status));
    }
}
