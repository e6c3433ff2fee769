package io.stasis.network.linux.nflog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.network.linux.nflog.LoggedPackets.Attribute;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.OptionalInt;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * What nfnetlink_log sends decodes to the drops that were logged; whatever bytes come instead, the
 * codec and the packet parser fail only with {@link NflogFormatException}.
 */
class NflogCodecPropertiesTest {

    /** A drop as the filter logs it, and the packet message that carries it. */
    record Logged(DroppedPacket expected, String prefix, byte[] payload, List<Attribute> attributes) {
    }

    @Property
    void loggedPacketsDecodeToTheirDrops(@ForAll @Size(min = 1, max = 5) List<@From("logged") Logged> batch, @ForAll boolean done) throws Exception {
        var writer = new LoggedPackets();
        for (int i = 0; i < batch.size(); i++) writer.packet(i, batch.get(i).attributes());
        if (done) writer.done(batch.size());
        byte[] bytes = writer.bytes();

        var decoded = new ArrayList<DroppedPacket>();
        for (var m : NflogCodec.decode(bytes, bytes.length))
            if (m instanceof NflogCodec.Packet p) decoded.add(DroppedPacket.parse(p.prefix(), p.payload()));

        assertThat(decoded).containsExactlyElementsOf(batch.stream().map(Logged::expected).toList());
    }

    @Property
    void randomBytesAreMessagesOrMalformed(@ForAll @Size(max = 300) byte[] bytes) {
        decodeAndParseOrFormatError(bytes, bytes.length);
    }

    /** Random bytes rarely get past the first header; valid messages with a few bytes changed reach attributes and packets. */
    @Property
    void damagedMessagesAreMessagesOrMalformed(@ForAll @Size(min = 1, max = 3) List<@From("logged") Logged> batch,
                                               @ForAll @Size(min = 1, max = 6) List<@IntRange(min = 0, max = 100_000) Integer> positions,
                                               @ForAll byte value) {
        var writer = new LoggedPackets();
        for (var logged : batch) writer.packet(1, logged.attributes());
        byte[] bytes = writer.bytes();
        for (int p : positions) bytes[p % bytes.length] = value;
        decodeAndParseOrFormatError(bytes, bytes.length);
    }

    @Property
    void truncatedMessagesAreMalformed(@ForAll("logged") Logged logged, @ForAll @IntRange(min = 1, max = 100_000) int cut) {
        byte[] bytes = new LoggedPackets().packet(1, logged.attributes()).bytes();
        int length = bytes.length - 1 - cut % (bytes.length - 1); // 1 .. all but the last byte
        assertThatThrownBy(() -> NflogCodec.decode(bytes, length)).isInstanceOf(NflogFormatException.class);
    }

    @Property
    void anyPrefixAndPayloadIsADropOrMalformed(@ForAll @Size(max = 40) String prefix, @ForAll @Size(max = 80) byte[] payload) {
        try {
            DroppedPacket.parse(prefix, payload);
        } catch (NflogFormatException expected) {
            // the one allowed failure
        }
    }

    @Property
    void acknowledgementsCarryTheirSequenceAndError(@ForAll int sequence, @ForAll @IntRange(min = -4095, max = 0) int error) throws Exception {
        byte[] bytes = new LoggedPackets().ack(sequence, error).bytes();
        assertThat(NflogCodec.decode(bytes, bytes.length)).containsExactly(new NflogCodec.Ack(sequence, error));
    }

    /** The request, field by field as {@code <linux/netfilter/nfnetlink_log.h>} lays it out. */
    @Example
    void bindRequestIsTheKernelsLayout() {
        byte[] expected = ByteBuffer.allocate(48).order(ByteOrder.nativeOrder())
                .putInt(48).putShort((short) 0x0401).putShort((short) 0x0005).putInt(9).putInt(0) // nlmsghdr: CONFIG, REQUEST|ACK, seq 9
                .put(new byte[] {0, 0, 0x1d, (byte) 0xb1})                                     // nfgenmsg: AF_UNSPEC, v0, group 7601 big-endian
                .putShort((short) 5).putShort((short) 1).put(new byte[] {1, 0, 0, 0})            // CFG_CMD: BIND
                .putShort((short) 10).putShort((short) 2).put(new byte[] {0, 0, 0, 64, 2, 0, 0, 0}) // CFG_MODE: 64 bytes, COPY_PACKET
                .putShort((short) 8).putShort((short) 5).put(new byte[] {0, 0, 0, 1})            // CFG_QTHRESH: 1
                .array();
        assertThat(HexFormat.of().formatHex(NflogCodec.bind(9, 7601, 64))).isEqualTo(HexFormat.of().formatHex(expected));
    }

    @Example
    void theSlotIsANumberOrADash() throws Exception {
        byte[] ping = LoggedPackets.ipv4(new byte[] {10, 0, 0, 2}, new byte[] {(byte) 169, (byte) 254, (byte) 169, (byte) 254}, 1, 0, 8, 0, 0, 64);
        assertThat(DroppedPacket.parse("- blocked host", ping).slot()).isEmpty();
        assertThat(DroppedPacket.parse("12 default deny", ping).slot()).hasValue(12);
        assertThat(DroppedPacket.parse("12 default deny", ping).rule()).isEqualTo("default deny");
        assertThat(DroppedPacket.parse("12 default deny", ping).protocolName()).isEqualTo("icmp");
        assertThat(DroppedPacket.parse("12 default deny", ping).icmpType()).hasValue(8);
        for (String bad : List.of("12", "12 ", "x deny", "-1 deny", "1234567890 deny", ""))
            assertThatThrownBy(() -> DroppedPacket.parse(bad, ping)).as(bad).isInstanceOf(NflogFormatException.class);
    }

    private static void decodeAndParseOrFormatError(byte[] bytes, int length) {
        try {
            for (var m : NflogCodec.decode(bytes, length))
                if (m instanceof NflogCodec.Packet p) DroppedPacket.parse(p.prefix(), p.payload());
        } catch (NflogFormatException expected) {
            // the one allowed failure
        }
    }

    @Provide
    Arbitrary<Logged> logged() {
        Arbitrary<byte[]> addresses = Arbitraries.bytes().array(byte[].class).ofSize(4);
        Arbitrary<Integer> protocols = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.just(DroppedPacket.TCP)),
                Tuple.of(3, Arbitraries.just(DroppedPacket.UDP)), Tuple.of(3, Arbitraries.just(DroppedPacket.ICMP)),
                Tuple.of(1, Arbitraries.integers().between(0, 255)));
        Arbitrary<Integer> fragmentOffsets = Arbitraries.frequencyOf(Tuple.of(9, Arbitraries.just(0)), Tuple.of(1, Arbitraries.integers().between(1, 0x1fff)));
        Arbitrary<Packet> packets = Combinators.combine(addresses, addresses, protocols, Arbitraries.integers().between(0, 65535),
                Arbitraries.integers().between(0, 255), Arbitraries.integers().between(0, 10), fragmentOffsets).as(Packet::new);
        Arbitrary<String> rules = Arbitraries.strings().withChars("abcdefghijklmnopqrstuvwxyz0123456789 /.-").ofMinLength(1).ofMaxLength(60)
                .filter(r -> !r.isBlank());
        return Combinators.combine(Arbitraries.integers().between(-1, 100_000), rules, packets, Arbitraries.integers().between(0, 3),
                Arbitraries.of(true, false)).as(NflogCodecPropertiesTest::logged);
    }

    /** The IPv4 side of a generated drop. */
    record Packet(byte[] source, byte[] destination, int protocol, int port, int icmpType, int optionWords, int fragmentOffset) {
    }

    /** The bytes of a drop in slot {@code slot} (-1: none) by {@code rule}, and what they must decode to. */
    private static Logged logged(int slot, String rule, Packet p, int extraAttributes, boolean payloadFirst) {
        String prefix = (slot < 0 ? "-" : Integer.toString(slot)) + " " + rule;
        byte[] payload = LoggedPackets.ipv4(p.source(), p.destination(), p.protocol(), p.port(), p.icmpType(), p.optionWords(),
                p.fragmentOffset(), NflogReader.COPY_RANGE);
        boolean first = p.fragmentOffset() == 0;
        boolean ports = first && (p.protocol() == DroppedPacket.TCP || p.protocol() == DroppedPacket.UDP);
        var expected = new DroppedPacket(slot < 0 ? OptionalInt.empty() : OptionalInt.of(slot), rule, ipv4(p.source()), ipv4(p.destination()),
                p.protocol(), ports ? p.port() : 0, first && p.protocol() == DroppedPacket.ICMP ? OptionalInt.of(p.icmpType()) : OptionalInt.empty());
        var attributes = new ArrayList<Attribute>();
        int[] others = {LoggedPackets.NFULA_PACKET_HDR, LoggedPackets.NFULA_TIMESTAMP, LoggedPackets.NFULA_IFINDEX_INDEV};
        for (int i = 0; i < extraAttributes; i++) attributes.add(new Attribute(others[i % 3], new byte[4 + 4 * i + i % 3]));
        var own = List.of(Attribute.prefix(prefix), Attribute.payload(payload));
        attributes.addAll(payloadFirst ? own.reversed() : own);
        return new Logged(expected, prefix, payload, attributes);
    }

    private static Inet4Address ipv4(byte[] address) {
        try {
            return (Inet4Address) InetAddress.getByAddress(address);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
