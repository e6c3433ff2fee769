package io.stasis.core.network;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** CIDR networks: their text reads back the same, and membership agrees with the leading bits. */
class CidrPropertyTest {

    private static InetAddress address(int bits) throws Exception {
        return InetAddress.getByAddress(new byte[] {(byte) (bits >>> 24), (byte) (bits >>> 16), (byte) (bits >>> 8), (byte) bits});
    }

    @Property
    void theTextReadsBackTheSameNetwork(@ForAll int bits, @ForAll @IntRange(min = 0, max = 32) int prefix) throws Exception {
        var cidr = new Cidr(address(bits), prefix);
        assertThat(Cidr.parse(cidr.toString(), "test")).isEqualTo(cidr);
    }

    @Property
    void anAddressIsInsideExactlyWhenItsLeadingBitsMatch(@ForAll int network, @ForAll int candidate,
                                                         @ForAll @IntRange(min = 0, max = 32) int prefix) throws Exception {
        var cidr = new Cidr(address(network), prefix);
        int mask = prefix == 0 ? 0 : -1 << (32 - prefix);
        assertThat(cidr.contains(address(candidate))).isEqualTo((network & mask) == (candidate & mask));
        assertThat(cidr.contains(address(network))).isTrue();
    }
}
