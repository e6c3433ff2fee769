package io.stasis.network.linux.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

class HttpHeadParserTest {
    private final HttpHeadParser parser = new HttpHeadParser();

    record Case(String host, byte[] head, List<Integer> reads) {
    }

    @Property(tries = 300)
    void findsTheHostWhateverTheHeadersAndReads(@ForAll("requests") Case c) throws Exception {
        for (int cut : c.reads()) assertThat(parser.parse(c.head(), cut)).isEqualTo(Head.PARTIAL);
        assertThat(parser.parse(c.head(), c.head().length)).isEqualTo(new Head.Complete(Optional.of(c.host().toLowerCase(Locale.ROOT))));
    }

    @Property(tries = 2000)
    void randomBytesOnlyEverFailAsMalformed(@ForAll @Size(max = 400) byte[] bytes) {
        HeadParserChecks.onlyEverFailsAsMalformed(parser, bytes);
    }

    @Property(tries = 2000)
    void randomTextOnlyEverFailsAsMalformed(@ForAll("headLike") String text) {
        HeadParserChecks.onlyEverFailsAsMalformed(parser, text.getBytes(StandardCharsets.ISO_8859_1));
    }

    @Example
    void noHostMeansNoName() throws Exception {
        assertThat(parse("GET / HTTP/1.0\r\nAccept: */*\r\n\r\n")).isEqualTo(new Head.Complete(Optional.empty()));
        assertThat(parse("GET / HTTP/1.1\r\nHost: 10.0.0.7:8080\r\n\r\n")).isEqualTo(new Head.Complete(Optional.empty()));
        assertThat(parse("GET / HTTP/1.1\r\nHost: [fe80::1]:80\r\n\r\n")).isEqualTo(new Head.Complete(Optional.empty()));
    }

    @Example
    void theAbsoluteTargetNamesTheHost() throws Exception {
        assertThat(parse("GET http://Example.COM:80/x HTTP/1.1\r\nHost: example.com:80\r\n\r\n"))
                .isEqualTo(new Head.Complete(Optional.of("example.com")));
        assertThat(parse("GET http://example.com./ HTTP/1.1\r\n\r\n")).isEqualTo(new Head.Complete(Optional.of("example.com")));
    }

    @Example
    void refusesWhatAServerCouldReadDifferently() {
        for (String head : List.of(
                "GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
                "GET http://evil.example/ HTTP/1.1\r\nHost: allowed.example\r\n\r\n",
                "GET / HTTP/1.1\r\nHost : a.example\r\n\r\n",
                "GET / HTTP/1.1\r\nX: y\r\n Host: a.example\r\n\r\n",
                "GET / HTTP/1.1\nHost: a.example\r\n\r\n",
                "GET / HTTP/1.1\r\nHost: a.example/x\r\n\r\n",
                "GET / HTTP/1.1\r\nHost: user@a.example\r\n\r\n",
                "GET / HTTP/1.1\r\nHost: \r\n\r\n",
                "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example\r\n\r\n",
                "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
                "\u0016\u0003\u0001"))
            assertThatThrownBy(() -> parse(head)).as(head).isInstanceOf(MalformedHeadException.class);
    }

    private Head parse(String head) throws MalformedHeadException {
        byte[] b = head.getBytes(StandardCharsets.ISO_8859_1);
        return parser.parse(b, b.length);
    }

    @Provide
    Arbitrary<String> headLike() {
        return Combinators.combine(Arbitraries.of("GET / HTTP/1.1\r\n", "", "GET http://"),
                        Arbitraries.strings().withChars("GET /HTP1.0\r\n:hostHOST[]@.-_ \t\u0080").ofMaxLength(120))
                .as((prefix, rest) -> prefix + rest);
    }

    @Provide
    Arbitrary<Case> requests() {
        Arbitrary<String> label = Arbitraries.strings().withChars("abcdefghijklmnopqrstuvwxyzXYZ0123456789-_").ofMinLength(1).ofMaxLength(15)
                .filter(l -> !l.startsWith("-") && !l.endsWith("-"));
        Arbitrary<String> host = Combinators.combine(label.list().ofMinSize(0).ofMaxSize(3), Arbitraries.strings().withCharRange('a', 'z').ofMinLength(2).ofMaxLength(5))
                .as((labels, top) -> String.join(".", labels) + (labels.isEmpty() ? "" : ".") + top);
        Arbitrary<String> headerName = Arbitraries.strings().withChars("abcdefghijklmnopqrstuvwxyz-ABC").ofMinLength(1).ofMaxLength(12)
                .filter(n -> !n.equalsIgnoreCase("host"));
        Arbitrary<String> header = Combinators.combine(headerName, Arbitraries.strings().withChars("abc xyz/;=,\u00e9").ofMaxLength(30))
                .as((n, v) -> n + ":" + v);
        return Combinators.combine(host, Arbitraries.of("", ":80", ":8080", ":"), Arbitraries.of("Host", "host", "HOST"),
                        header.list().ofMaxSize(8), Arbitraries.integers().between(0, 8), Arbitraries.of("GET", "POST", "OPTIONS"),
                        Arbitraries.integers().between(1, 4000).set().ofMaxSize(6))
                .as((h, port, hostHeader, headers, position, method, cuts) -> {
                    List<String> lines = new ArrayList<>(headers);
                    lines.add(Math.min(position, lines.size()), hostHeader + ":  " + h + port + " ");
                    String text = method + " /path?q=1 HTTP/1.1\r\n" + String.join("\r\n", lines) + "\r\n\r\nbody";
                    byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
                    int headLength = text.indexOf("\r\n\r\n") + 4;
                    Set<Integer> reads = new TreeSet<>();
                    for (int cut : cuts) reads.add(cut % headLength);
                    return new Case(h, bytes, List.copyOf(reads));
                });
    }
}
