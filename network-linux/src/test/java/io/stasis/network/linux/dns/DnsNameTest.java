package io.stasis.network.linux.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Names on the wire: labels, pointers, and what is refused. */
class DnsNameTest {

    @Test
    void aPointerLeadsToAnEarlierNameAndTheNameEndsAfterThePointer() throws DnsFormatException {
        byte[] message = {7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 4, 't', 'e', 's', 't', 0, 3, 'w', 'w', 'w', (byte) 0xc0, 0};

        DnsName.Read read = DnsName.read(message, 14);

        assertThat(read).isEqualTo(new DnsName.Read("www.example.test", 20));
    }

    @Test
    void twoPointersThatLeadToEachOtherAreRefused() {
        byte[] message = {0, 0, (byte) 0xc0, 4, (byte) 0xc0, 2};

        assertThatThrownBy(() -> DnsName.read(message, 4)).isInstanceOf(DnsFormatException.class).hasMessageContaining("does not point backwards");
        assertThatThrownBy(() -> DnsName.read(message, 2)).isInstanceOf(DnsFormatException.class).hasMessageContaining("does not point backwards");
    }

    @Test
    void aNameLongerThan255BytesIsRefused() {
        var out = new DnsWriter();
        for (int i = 0; i < 5; i++) {
            out.u8(63);
            for (int j = 0; j < 63; j++) out.u8('a');
        }
        out.u8(0);

        assertThatThrownBy(() -> DnsName.read(out.toByteArray(), 0)).isInstanceOf(DnsFormatException.class).hasMessageContaining("longer than 255");
    }

    @Test
    void labelsWithDotsSpacesOrNonAsciiAreRefusedRatherThanMisread() {
        assertThatThrownBy(() -> DnsName.read(new byte[] {3, 'a', '.', 'b', 0}, 0)).isInstanceOf(DnsFormatException.class);
        assertThatThrownBy(() -> DnsName.read(new byte[] {1, ' ', 0}, 0)).isInstanceOf(DnsFormatException.class);
        assertThatThrownBy(() -> DnsName.read(new byte[] {1, (byte) 0xe9, 0}, 0)).isInstanceOf(DnsFormatException.class);
    }

    @Test
    void theReservedLabelTypesAreRefused() {
        assertThatThrownBy(() -> DnsName.read(new byte[] {0x40, 0}, 0)).isInstanceOf(DnsFormatException.class).hasMessageContaining("reserved");
        assertThatThrownBy(() -> DnsName.read(new byte[] {(byte) 0x80, 0}, 0)).isInstanceOf(DnsFormatException.class).hasMessageContaining("reserved");
    }

    @Test
    void theRootIsTheEmptyName() throws DnsFormatException {
        assertThat(DnsName.read(new byte[] {0}, 0)).isEqualTo(new DnsName.Read("", 1));
    }
}
