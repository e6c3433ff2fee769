package io.stasis.network.linux.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** The codec reads back what it writes, and whatever bytes it is given, fails only as malformed. */
class DnsCodecPropertiesTest {
    /** Whole messages are costly to generate; fewer tries keep the module's tests within seconds. */
    private static final int MESSAGE_TRIES = 300;

    @Property(tries = MESSAGE_TRIES)
    void encodedMessagesDecodeToThemselves(@ForAll("messages") DnsMessage message) throws DnsFormatException {
        assertThat(DnsMessage.decode(message.encode())).isEqualTo(message);
    }

    @Property
    void randomBytesAreAMessageOrMalformed(@ForAll @Size(max = 600) byte[] bytes) {
        decodeOrFormatError(bytes);
    }

    /** Random bytes rarely get past the header; a valid message with a few bytes changed reaches the names and records. */
    @Property(tries = MESSAGE_TRIES)
    void damagedMessagesAreAMessageOrMalformed(@ForAll("messages") DnsMessage message,
                                              @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = 100_000) Integer> positions,
                                              @ForAll byte value) {
        byte[] bytes = message.encode();
        for (int p : positions) bytes[p % bytes.length] = value;
        decodeOrFormatError(bytes);
    }

    @Property(tries = MESSAGE_TRIES)
    void truncatedMessagesAreMalformed(@ForAll("messages") DnsMessage message, @ForAll @IntRange(min = 1, max = 100_000) int cut) {
        byte[] whole = message.encode();
        byte[] bytes = Arrays.copyOf(whole, Math.max(0, whole.length - 1 - cut % whole.length));
        assertThatThrownBy(() -> DnsMessage.decode(bytes)).isInstanceOf(DnsFormatException.class);
    }

    /** A pointer to itself or anywhere after it is what a loop needs; every such pointer is refused. */
    @Property
    void pointersThatDoNotPointBackwardsAreRefused(@ForAll("names") String prefix, @ForAll @IntRange(min = 0, max = 600) int ahead) {
        var out = new DnsWriter();
        out.bytes(new byte[] {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}); // id 1, one question
        for (String label : prefix.isEmpty() ? new String[0] : prefix.split("\\.")) {
            out.u8(label.length());
            for (char c : label.toCharArray()) out.u8(c);
        }
        int target = out.position() + ahead;
        out.u16(0xc000 | target);
        out.u16(DnsType.A);
        out.u16(DnsType.CLASS_IN);
        byte[] bytes = Arrays.copyOf(out.toByteArray(), Math.max(out.position(), target + 2));

        assertThatThrownBy(() -> DnsMessage.decode(bytes)).isInstanceOf(DnsFormatException.class).hasMessageContaining("does not point backwards");
    }

    @Property(tries = MESSAGE_TRIES)
    void repeatedNamesAreWrittenAsPointers(@ForAll("names") String name, @ForAll @IntRange(min = 2, max = 20) int count) {
        Assume.that(!name.isEmpty()); // the root is one byte, shorter than a pointer
        var address = ipv4(192, 0, 2, 1);
        var one = new DnsMessage(DnsHeader.query(7), List.of(DnsQuestion.in(name, DnsType.A)), List.of(), List.of(), List.of());
        var many = new DnsMessage(DnsHeader.query(7), one.questions(),
                Collections.nCopies(count, DnsRecord.a(name, 60, address)), List.of(), List.of());

        // each record after the question: a 2-byte pointer, type, class, TTL, length, 4 bytes of address
        assertThat(many.encode().length - one.encode().length).isEqualTo(count * (2 + 2 + 2 + 4 + 2 + 4));
    }

    private static void decodeOrFormatError(byte[] bytes) {
        try {
            DnsMessage.decode(bytes);
        } catch (DnsFormatException expected) {
            // the one allowed failure
        }
    }

    @Provide
    Arbitrary<String> names() {
        Arbitrary<String> label = Arbitraries.strings().withChars("abcXYZ019-_").ofMinLength(1).ofMaxLength(63);
        Arbitrary<String> common = Arbitraries.of("example", "test", "a", "B");
        return Arbitraries.oneOf(label, common).list().ofMaxSize(6).map(labels -> String.join(".", labels))
                .filter(n -> n.length() + 2 <= DnsName.MAX_LENGTH);
    }

    @Provide
    Arbitrary<DnsMessage> messages() {
        Arbitrary<DnsHeader> headers = Combinators.combine(
                Arbitraries.integers().between(0, 0xffff), Arbitraries.of(true, false), Arbitraries.integers().between(0, 15),
                Arbitraries.of(true, false), Arbitraries.of(true, false), Arbitraries.of(true, false), Arbitraries.integers().between(0, 15))
                .as((id, response, opcode, aa, tc, rd, rcode) -> new DnsHeader(id, response, opcode, aa, tc, rd, !rd, rcode));
        Arbitrary<DnsQuestion> questions = Combinators.combine(names(), u16(), u16()).as(DnsQuestion::new);
        Arbitrary<List<DnsRecord>> section = records().list().ofMaxSize(5);
        return Combinators.combine(headers, questions.list().ofMaxSize(3), section, section, section).as(DnsMessage::new);
    }

    private Arbitrary<DnsRecord> records() {
        Arbitrary<Long> ttls = Arbitraries.longs().between(0, 0xffff_ffffL);
        Arbitrary<DnsRecord> addresses = Combinators.combine(names(), ttls, Arbitraries.bytes().array(byte[].class).ofSize(4))
                .as((name, ttl, bytes) -> DnsRecord.a(name, ttl, ipv4(bytes[0], bytes[1], bytes[2], bytes[3])));
        Arbitrary<DnsRecord> aliases = Combinators.combine(names(), u16(), ttls, names())
                .as((name, dnsClass, ttl, target) -> new DnsRecord(name, dnsClass, ttl, new DnsRecord.Cname(target)));
        Arbitrary<DnsRecord> opaque = Combinators.combine(names(), u16(), ttls, u16().filter(t -> t != DnsType.A && t != DnsType.CNAME),
                        Arbitraries.bytes().array(byte[].class).ofMaxSize(40))
                .as((name, dnsClass, ttl, type, bytes) -> new DnsRecord(name, dnsClass, ttl, new DnsRecord.Opaque(type, bytes)));
        return Arbitraries.oneOf(addresses, aliases, opaque);
    }

    private static Arbitrary<Integer> u16() {
        return Arbitraries.integers().between(0, 0xffff);
    }

    static Inet4Address ipv4(int a, int b, int c, int d) {
        try {
            return (Inet4Address) InetAddress.getByAddress(new byte[] {(byte) a, (byte) b, (byte) c, (byte) d});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
