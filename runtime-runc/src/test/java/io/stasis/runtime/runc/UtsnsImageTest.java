package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.AlphaChars;
import net.jqwik.api.constraints.NumericChars;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/** CRIU's UTS namespace image, read and given another hostname for a fork's restore. */
class UtsnsImageTest {
    private static final HexFormat HEX = HexFormat.of();
    /** A sandbox's utsns-12.img as CRIU 4.2 wrote it: nodename sbx-q8qp85kodaayd5bv, domainname (none). */
    private static final byte[] DUMPED = HEX.parseHex("1943565403324754" + "1e000000" + "0a14" + hex("sbx-q8qp85kodaayd5bv") + "1206" + hex("(none)"));

    @Test
    void theHostnameOfAnImageCriuWroteIsReadAndReplacedKeepingTheDomainName() {
        assertThat(UtsnsImage.hostname(DUMPED)).isEqualTo("sbx-q8qp85kodaayd5bv");
        byte[] fork = UtsnsImage.withHostname(DUMPED, "sbx-fork");
        assertThat(HEX.formatHex(fork)).isEqualTo("1943565403324754" + "12000000" + "0a08" + hex("sbx-fork") + "1206" + hex("(none)"));
        assertThat(UtsnsImage.withHostname(fork, "sbx-q8qp85kodaayd5bv")).as("and back, byte for byte").isEqualTo(DUMPED);
    }

    @Test
    void aNameOfMoreThan127BytesHasATwoByteLength() {
        String longName = "n".repeat(200);
        byte[] image = UtsnsImage.withHostname(DUMPED, longName);
        assertThat(HEX.formatHex(image, 12, 15)).isEqualTo("0ac801");
        assertThat(UtsnsImage.hostname(image)).isEqualTo(longName);
    }

    @Test
    void anythingElseIsRefused() {
        assertThatThrownBy(() -> UtsnsImage.hostname(new byte[0])).hasMessageContaining("not a CRIU UTS namespace image");
        byte[] otherMagic = DUMPED.clone();
        otherMagic[4] ^= 1;
        assertThatThrownBy(() -> UtsnsImage.hostname(otherMagic)).hasMessageContaining("not a CRIU UTS namespace image");
        assertThatThrownBy(() -> UtsnsImage.hostname(Arrays.copyOf(DUMPED, DUMPED.length - 1))).hasMessageContaining("one entry");
        byte[] noName = HEX.parseHex("1943565403324754" + "08000000" + "1206" + hex("(none)"));
        assertThatThrownBy(() -> UtsnsImage.hostname(noName)).hasMessageContaining("without a nodename");
    }

    @Property
    void anyHostnameGoesInAndComesBackWithTheRestUnchanged(@ForAll @AlphaChars @NumericChars @StringLength(min = 1, max = 64) String hostname) {
        byte[] image = UtsnsImage.withHostname(DUMPED, hostname);
        assertThat(UtsnsImage.hostname(image)).isEqualTo(hostname);
        assertThat(UtsnsImage.withHostname(image, "sbx-q8qp85kodaayd5bv")).isEqualTo(DUMPED);
    }

    private static String hex(String text) {
        return HEX.formatHex(text.getBytes(StandardCharsets.US_ASCII));
    }
}
