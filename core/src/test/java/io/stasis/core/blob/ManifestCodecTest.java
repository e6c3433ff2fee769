package io.stasis.core.blob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The stored form is fixed: stores written today must read the same in every later release. */
class ManifestCodecTest {
    private static final ChunkId A = ChunkId.of("a".getBytes());
    private static final ChunkId B = ChunkId.of("b".getBytes());

    @Test
    void theFormatIsPinned() {
        var manifest = new Manifest(List.of(new ChunkRef(A, 1), new ChunkRef(B, 70_000), new ChunkRef(A, 1)));
        assertThat(HexFormat.of().formatHex(ManifestCodec.encode(manifest))).isEqualTo(
                "53544d46" + "01" + "00" + "00000003" + "0000000000011172"
                        + A.hex() + "00000001" + B.hex() + "00011170" + A.hex() + "00000001");
    }

    @Test
    void anEmptyStreamHasAManifestWithNoChunks() {
        var empty = new Manifest(List.of());
        byte[] encoded = ManifestCodec.encode(empty);
        assertThat(encoded).hasSize(18);
        assertThat(ManifestCodec.decode(encoded)).isEqualTo(empty);
        assertThat(empty.size()).isZero();
    }

    @Test
    void anUnknownVersionIsRefusedByName() {
        byte[] encoded = ManifestCodec.encode(new Manifest(List.of(new ChunkRef(A, 1))));
        encoded[4] = 2;
        assertThatThrownBy(() -> ManifestCodec.decode(encoded)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("version 2 is not known");
    }

    @Test
    void idsAreSha256InLowercaseHex() {
        assertThat(ChunkId.of("abc".getBytes()).hex()).isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assertThatThrownBy(() -> new ChunkId("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lowercase hex");
        assertThatThrownBy(() -> ManifestId.parse("abc")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ChunkRef(A, 0)).hasMessageContaining("outside 1..");
    }
}
