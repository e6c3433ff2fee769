package io.stasis.network.linux.proxy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

class ClientHelloParserTest {
    private static final int MAX = Protocol.TLS.maxHeadBytes();
    private final ClientHelloParser parser = new ClientHelloParser(MAX);

    record Case(String name, byte[] stream, List<Integer> reads) {
    }

    @Property(tries = 300)
    void findsTheNameWhateverTheExtensionsRecordsAndReads(@ForAll("hellos") Case c) throws Exception {
        // Each read delivers more bytes; before the last one the parser must only ask for more.
        int length = 0;
        for (int cut : c.reads()) {
            length = cut;
            assertThat(parser.parse(c.stream(), length)).isEqualTo(Head.PARTIAL);
        }
        assertThat(parser.parse(c.stream(), c.stream().length))
                .isEqualTo(new Head.Complete(Optional.of(c.name().toLowerCase(Locale.ROOT).replaceAll("\\.$", ""))));
    }

    @Property(tries = 100)
    void bytesAfterTheHelloAreNotItsBusiness(@ForAll("hellos") Case c, @ForAll @Size(max = 64) List<Byte> earlyData) throws Exception {
        byte[] more = Arrays.copyOf(c.stream(), c.stream().length + earlyData.size());
        for (int i = 0; i < earlyData.size(); i++) more[c.stream().length + i] = earlyData.get(i);
        assertThat(parser.parse(more, more.length)).isInstanceOf(Head.Complete.class);
    }

    @Property(tries = 2000)
    void randomBytesOnlyEverFailAsMalformed(@ForAll @Size(max = 600) byte[] bytes) {
        HeadParserChecks.onlyEverFailsAsMalformed(parser, bytes);
    }

    @Property(tries = 1000)
    void corruptedHellosOnlyEverFailAsMalformed(@ForAll("hellos") Case c, @ForAll @IntRange(min = 0, max = 100_000) int at,
                                                @ForAll byte value) {
        byte[] corrupt = c.stream().clone();
        corrupt[at % corrupt.length] = value;
        HeadParserChecks.onlyEverFailsAsMalformed(parser, corrupt);
    }

    @Example
    void readsTheJdkClientHello() throws Exception {
        SSLEngine engine = SSLContext.getDefault().createSSLEngine("api.example.com", 443);
        engine.setUseClientMode(true);
        SSLParameters params = engine.getSSLParameters();
        params.setServerNames(List.of(new SNIHostName("api.example.com")));
        engine.setSSLParameters(params);
        ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.wrap(ByteBuffer.allocate(0), out);
        byte[] hello = Arrays.copyOf(out.array(), out.position());

        assertThat(parser.parse(hello, hello.length)).isEqualTo(new Head.Complete(Optional.of("api.example.com")));
        assertThat(parser.parse(hello, hello.length - 1)).isEqualTo(Head.PARTIAL);
    }

    @Example
    void aHelloWithoutServerNameHasNoName() throws Exception {
        byte[] stream = ClientHellos.records(ClientHellos.handshake(new byte[0], 2, List.of(new ClientHellos.Extension(10, new byte[4]))), List.of());
        assertThat(parser.parse(stream, stream.length)).isEqualTo(new Head.Complete(Optional.empty()));
    }

    @Example
    void refusesWhatAServerCouldReadDifferently() {
        var sni = ClientHellos.serverName("allowed.example");
        assertMalformed(List.of(sni, ClientHellos.serverName("evil.example")), "blocked malformed tls"); // duplicate extension
        assertMalformed(List.of(sni, new ClientHellos.Extension(0xfe0d, new byte[8])), "blocked encrypted client hello");
        assertMalformed(List.of(ClientHellos.serverName("10.0.0.1")), "blocked malformed tls");
        assertMalformed(List.of(ClientHellos.serverName("evil\u0000.example")), "blocked malformed tls");
        assertMalformed(List.of(new ClientHellos.Extension(0, new byte[0])), "blocked malformed tls");
    }

    @Example
    void refusesAHelloLongerThanTheBound() {
        byte[] stream = ClientHellos.records(ClientHellos.handshake(new byte[0], 2,
                List.of(new ClientHellos.Extension(21, new byte[MAX]))), List.of(16_000));
        assertThatThrownBy(() -> parser.parse(stream, stream.length)).isInstanceOf(MalformedHeadException.class);
    }

    @Example
    void refusesNonTls() {
        byte[] http = "GET / HTTP/1.1\r\n".getBytes();
        assertThatThrownBy(() -> parser.parse(http, http.length)).isInstanceOf(MalformedHeadException.class);
    }

    private void assertMalformed(List<ClientHellos.Extension> extensions, String rule) {
        byte[] stream = ClientHellos.records(ClientHellos.handshake(new byte[0], 2, extensions), List.of());
        assertThatThrownBy(() -> parser.parse(stream, stream.length))
                .isInstanceOfSatisfying(MalformedHeadException.class, e -> assertThat(e.rule()).isEqualTo(rule));
    }

    @Provide
    Arbitrary<Case> hellos() {
        Arbitrary<String> label = Arbitraries.strings().withChars("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-").ofMinLength(1).ofMaxLength(20)
                .filter(l -> !l.startsWith("-") && !l.endsWith("-"));
        Arbitrary<String> tld = Arbitraries.strings().withCharRange('a', 'z').ofMinLength(2).ofMaxLength(6);
        Arbitrary<String> name = Combinators.combine(label.list().ofMinSize(0).ofMaxSize(3), tld, Arbitraries.of("", "."))
                .as((labels, top, dot) -> String.join(".", labels) + (labels.isEmpty() ? "" : ".") + top + dot);
        Arbitrary<List<ClientHellos.Extension>> others = Arbitraries.integers().between(1, 0xfe00).set().ofMaxSize(12)
                .flatMap(types -> Combinators.combine(types.stream()
                        .map(t -> Arbitraries.bytes().array(byte[].class).ofMaxSize(40).map(d -> new ClientHellos.Extension(t, d)))
                        .toList()).as(List::copyOf));
        return Combinators.combine(name, others, Arbitraries.integers().between(0, 12), Arbitraries.bytes().array(byte[].class).ofMaxSize(32),
                        Arbitraries.integers().between(1, 40), Arbitraries.integers().between(1, 300).list().ofMinSize(1).ofMaxSize(8),
                        Arbitraries.integers().between(1, 5000).set().ofMaxSize(6))
                .as((n, exts, position, session, suites, recordSizes, cuts) -> {
                    List<ClientHellos.Extension> all = new ArrayList<>(exts);
                    all.add(Math.min(position, all.size()), ClientHellos.serverName(n));
                    byte[] stream = ClientHellos.records(ClientHellos.handshake(session, suites, all), recordSizes);
                    Set<Integer> reads = new TreeSet<>();
                    for (int cut : cuts) reads.add(cut % stream.length);
                    return new Case(n, stream, List.copyOf(reads));
                });
    }
}
