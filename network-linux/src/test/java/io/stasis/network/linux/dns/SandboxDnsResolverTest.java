package io.stasis.network.linux.dns;

import static io.stasis.network.linux.dns.DnsCodecPropertiesTest.ipv4;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.stasis.core.network.EgressAttempt;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.network.linux.RecordingGate;
import io.stasis.network.linux.RecordingGate.Resolution;
import io.stasis.network.linux.dns.StubUpstream.Asked;
import java.net.DatagramSocket;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The resolver on 127.0.0.1 with a stub upstream: what a sandbox gets for each kind of name. */
class SandboxDnsResolverTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static final InetSocketAddress EPHEMERAL = new InetSocketAddress(LOOPBACK, 0);
    private static final SandboxId SANDBOX = SandboxId.random();
    private static final EgressPolicy POLICY = new EgressPolicy(EgressPolicy.Action.DENY,
            rules("example.test", "*.wild.test", "alias.test", "big.test", "internal.test"), rules("blocked.test"));
    private static final Inet4Address EXAMPLE_1 = ipv4(192, 0, 2, 10);
    private static final Inet4Address EXAMPLE_2 = ipv4(192, 0, 2, 11);
    private static final Inet4Address EDGE = ipv4(192, 0, 2, 20);
    private static final Inet4Address INTERNAL = ipv4(10, 0, 0, 5);
    private static final Map<String, List<Inet4Address>> STATIC = Map.of("Internal.test", List.of(INTERNAL), "hidden.test", List.of(INTERNAL));

    private StubUpstream upstream;
    private RecordingGate gate;
    private SandboxDnsResolver resolver;

    @BeforeEach
    void start() throws Exception {
        upstream = StubUpstream.start()
                .answer("example.test", DnsRecord.a("example.test", 300, EXAMPLE_1), DnsRecord.a("example.test", 300, EXAMPLE_2))
                .answer("www.wild.test", DnsRecord.cname("www.wild.test", 120, "edge.wild.test"), DnsRecord.a("edge.wild.test", 30, EDGE))
                .answer("alias.test", DnsRecord.cname("alias.test", 120, "blocked.test"), DnsRecord.a("blocked.test", 30, EDGE))
                .answer("big.test", DnsRecord.a("big.test", 60, EXAMPLE_1))
                .truncateOverUdp("big.test");
        gate = new RecordingGate(Map.of(LOOPBACK, SANDBOX), POLICY);
        resolver = SandboxDnsResolver.start(gate, new DnsUpstreams(List.of(upstream.address()), Duration.ofSeconds(1)), STATIC, EPHEMERAL);
    }

    @AfterEach
    void stop() throws Exception {
        resolver.close();
        upstream.close();
    }

    @Test
    void anAllowedNameIsForwardedAndAnsweredUnderTheClientsId() throws Exception {
        DnsMessage answer = DnsTestClient.udp(resolver.address(), DnsMessage.query(0x1234, DnsQuestion.in("Example.TEST", DnsType.A)));

        assertThat(answer.header().id()).isEqualTo(0x1234);
        assertThat(answer.header().rcode()).isEqualTo(Rcode.NOERROR);
        assertThat(answer.answers()).extracting(DnsRecord::data).containsExactly(new DnsRecord.A(EXAMPLE_1), new DnsRecord.A(EXAMPLE_2));
        assertThat(gate.resolved()).containsExactly(new Resolution(SANDBOX, "example.test", List.of(EXAMPLE_1, EXAMPLE_2), Duration.ofSeconds(300)));
        assertThat(gate.allowed()).extracting(EgressAttempt::domain, EgressAttempt::port, EgressAttempt::protocol)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(Optional.of("example.test"), 53, "dns"));
        assertThat(gate.denied()).isEmpty();
    }

    @Test
    void aDeniedNameGetsNxdomainIsRecordedAndNeverLeaves() throws Exception {
        DnsMessage answer = ask("denied.test", DnsType.A);

        assertThat(answer.header().rcode()).isEqualTo(Rcode.NXDOMAIN);
        assertThat(answer.questions()).containsExactly(DnsQuestion.in("denied.test", DnsType.A));
        assertThat(gate.denied()).containsExactly(new EgressAttempt(Optional.of("denied.test"), Optional.empty(), 53, "dns", "default deny"));
        assertThat(upstream.asked()).isEmpty();
        assertThat(gate.resolved()).isEmpty();
        assertThat(gate.allowed()).isEmpty();
    }

    @Test
    void aWildcardAllowsNamesBelowItThroughTheirCnameChainButNotItself() throws Exception {
        DnsMessage below = ask("www.wild.test", DnsType.A);
        DnsMessage apex = ask("wild.test", DnsType.A);

        assertThat(below.header().rcode()).isEqualTo(Rcode.NOERROR);
        assertThat(below.answers()).hasSize(2);
        // the chain's shortest TTL: the A record's 30 s, not the CNAME's 120 s
        assertThat(gate.resolved()).containsExactly(new Resolution(SANDBOX, "www.wild.test", List.of(EDGE), Duration.ofSeconds(30)));
        assertThat(apex.header().rcode()).isEqualTo(Rcode.NXDOMAIN);
        assertThat(gate.denied()).extracting(EgressAttempt::domain).containsExactly(Optional.of("wild.test"));
    }

    @Test
    void aCnameToADeniedNameGetsNxdomainAndRecordsTheTarget() throws Exception {
        DnsMessage answer = ask("alias.test", DnsType.A);

        assertThat(answer.header().rcode()).isEqualTo(Rcode.NXDOMAIN);
        assertThat(answer.answers()).isEmpty();
        assertThat(gate.denied()).containsExactly(new EgressAttempt(Optional.of("blocked.test"), Optional.empty(), 53, "dns", "deny blocked.test"));
        assertThat(gate.resolved()).isEmpty();
    }

    @Test
    void aStaticNameIsAnsweredWithoutUpstreamAndOnlyIfThePolicyAllowsIt() throws Exception {
        DnsMessage a = ask("internal.TEST", DnsType.A);
        DnsMessage txt = ask("internal.test", 16);
        DnsMessage hidden = ask("hidden.test", DnsType.A);

        assertThat(a.answers()).containsExactly(DnsRecord.a("internal.TEST", 60, INTERNAL));
        assertThat(gate.resolved()).containsExactly(new Resolution(SANDBOX, "internal.test", List.of(INTERNAL), Duration.ofSeconds(60)));
        assertThat(txt.header().rcode()).isEqualTo(Rcode.NOERROR);
        assertThat(txt.answers()).isEmpty();
        assertThat(hidden.header().rcode()).isEqualTo(Rcode.NXDOMAIN);
        assertThat(upstream.asked()).isEmpty();
    }

    @Test
    void aaaaForAnAllowedNameIsAnEmptyAnswerSoClientsUseIpv4() throws Exception {
        DnsMessage answer = ask("example.test", DnsType.AAAA);

        assertThat(answer.header().rcode()).isEqualTo(Rcode.NOERROR);
        assertThat(answer.answers()).isEmpty();
        assertThat(upstream.asked()).isEmpty();
    }

    @Test
    void reverseLookupsGetNxdomainAndAnyIsRefused() throws Exception {
        assertThat(ask("10.2.0.192.in-addr.arpa", DnsType.PTR).header().rcode()).isEqualTo(Rcode.NXDOMAIN);
        assertThat(ask("example.test", DnsType.ANY).header().rcode()).isEqualTo(Rcode.REFUSED);
        assertThat(upstream.asked()).isEmpty();
        assertThat(gate.denied()).isEmpty();
    }

    @Test
    void aQueryOverTcpIsForwardedOverTcp() throws Exception {
        DnsMessage answer = DnsTestClient.tcp(resolver.address(), DnsMessage.query(77, DnsQuestion.in("example.test", DnsType.A)));

        assertThat(answer.header().id()).isEqualTo(77);
        assertThat(answer.answers()).hasSize(2);
        assertThat(upstream.asked()).containsExactly(new Asked(Transport.TCP, "example.test"));
    }

    @Test
    void aTruncatedUdpAnswerIsPassedOnAndTheTcpRetryGetsTheRecords() throws Exception {
        var query = DnsMessage.query(5, DnsQuestion.in("big.test", DnsType.A));

        DnsMessage overUdp = DnsTestClient.udp(resolver.address(), query);
        DnsMessage overTcp = DnsTestClient.tcp(resolver.address(), query);

        assertThat(overUdp.header().truncated()).isTrue();
        assertThat(overUdp.header().id()).isEqualTo(5);
        assertThat(overUdp.answers()).isEmpty(); // what was cut could not be checked against the policy
        assertThat(overTcp.header().truncated()).isFalse();
        assertThat(overTcp.answers()).containsExactly(DnsRecord.a("big.test", 60, EXAMPLE_1));
        assertThat(gate.resolved()).extracting(Resolution::name).containsExactly("big.test");
        assertThat(upstream.asked()).containsExactly(new Asked(Transport.UDP, "big.test"), new Asked(Transport.TCP, "big.test"));
    }

    @Test
    void aMalformedQueryGetsFormerrUnderItsId() throws Exception {
        byte[] oneQuestionMissing = {0x0a, 0x0b, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};

        DnsMessage answer = DnsMessage.decode(DnsTestClient.udp(resolver.address(), oneQuestionMissing));

        assertThat(answer.header().id()).isEqualTo(0x0a0b);
        assertThat(answer.header().rcode()).isEqualTo(Rcode.FORMERR);
    }

    @Test
    void aQueryFromAnAddressNoSandboxOwnsIsRefused() throws Exception {
        var stranger = new RecordingGate(Map.of(), EgressPolicy.ALLOW_ALL);
        try (var other = SandboxDnsResolver.start(stranger, DnsUpstreams.of(upstream.address()), Map.of(), EPHEMERAL)) {
            DnsMessage answer = DnsTestClient.udp(other.address(), DnsMessage.query(9, DnsQuestion.in("example.test", DnsType.A)));

            assertThat(answer.header().id()).isEqualTo(9);
            assertThat(answer.header().rcode()).isEqualTo(Rcode.REFUSED);
            assertThat(answer.questions()).containsExactly(DnsQuestion.in("example.test", DnsType.A));
            assertThat(upstream.asked()).isEmpty();
        }
    }

    @Test
    void whenNoUpstreamAnswersInTimeTheAnswerIsServfail() throws Exception {
        try (var silent = new DatagramSocket(EPHEMERAL);
             var other = SandboxDnsResolver.start(gate, new DnsUpstreams(List.of(address(silent)), Duration.ofMillis(200)), Map.of(), EPHEMERAL)) {
            assertThat(DnsTestClient.udp(other.address(), DnsMessage.query(3, DnsQuestion.in("example.test", DnsType.A))).header().rcode())
                    .isEqualTo(Rcode.SERVFAIL);
        }
    }

    @Test
    void aSilentUpstreamIsPassedOverForTheNext() throws Exception {
        try (var silent = new DatagramSocket(EPHEMERAL);
             var other = SandboxDnsResolver.start(gate, new DnsUpstreams(List.of(address(silent), upstream.address()), Duration.ofMillis(200)),
                     Map.of(), EPHEMERAL)) {
            DnsMessage answer = DnsTestClient.udp(other.address(), DnsMessage.query(4, DnsQuestion.in("example.test", DnsType.A)));

            assertThat(answer.header().rcode()).isEqualTo(Rcode.NOERROR);
            assertThat(answer.answers()).hasSize(2);
        }
    }

    @Test
    void closingFreesThePortForUdpAndTcpAndCanBeRepeated() throws Exception {
        InetSocketAddress bound = resolver.address();
        ask("example.test", DnsType.A);

        resolver.close();
        resolver.close();

        assertThatCode(() -> {
            try (var _ = new DatagramSocket(bound); var tcp = new ServerSocket()) {
                tcp.bind(bound);
            }
        }).doesNotThrowAnyException();
    }

    private DnsMessage ask(String name, int type) throws Exception {
        return DnsTestClient.udp(resolver.address(), DnsMessage.query(42, DnsQuestion.in(name, type)));
    }

    private static InetSocketAddress address(DatagramSocket socket) {
        return new InetSocketAddress(LOOPBACK, socket.getLocalPort());
    }

    private static List<EgressRule> rules(String... entries) {
        return Arrays.stream(entries).map(e -> EgressRule.parse(e, "test")).toList();
    }
}
