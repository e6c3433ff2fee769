package io.stasis.core.blob;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * The manifest format: what is encoded decodes to the same manifest, an encoding is a function of
 * the manifest (so its hash can be its id), and decoding accepts nothing but encodings: truncated,
 * altered or random bytes are refused with IllegalArgumentException and nothing else.
 */
class ManifestCodecPropertyTest {

    @Provide
    Arbitrary<Manifest> manifests() {
        Arbitrary<ChunkId> ids = Arbitraries.bytes().array(byte[].class).ofSize(32).map(ChunkId::fromDigest);
        Arbitrary<Integer> sizes = Arbitraries.oneOf(Arbitraries.integers().between(1, ChunkRef.MAX_SIZE),
                Arbitraries.of(1, ChunkRef.MAX_SIZE, 1 << 20));
        return Combinators.combine(ids, sizes).as(ChunkRef::new).list().ofMaxSize(200).map(Manifest::new);
    }

    @Property
    void whatIsEncodedDecodesToTheSameManifest(@ForAll("manifests") Manifest manifest) {
        byte[] encoded = ManifestCodec.encode(manifest);
        assertThat(ManifestCodec.decode(encoded)).isEqualTo(manifest);
        assertThat(ManifestCodec.decode(encoded).size()).isEqualTo(manifest.size());
    }

    @Property
    void theEncodingAndSoTheIdDependOnlyOnTheManifest(@ForAll("manifests") Manifest manifest) {
        var copy = new Manifest(manifest.chunks().stream().map(c -> new ChunkRef(new ChunkId(c.id().hex()), c.size())).toList());
        assertThat(ManifestCodec.encode(copy)).isEqualTo(ManifestCodec.encode(manifest));
        assertThat(ManifestId.of(ManifestCodec.encode(copy))).isEqualTo(ManifestId.of(ManifestCodec.encode(manifest)));
    }

    @Property
    void aTruncatedManifestIsRefused(@ForAll("manifests") Manifest manifest, @ForAll @IntRange(min = 1, max = 10_000) int cut) {
        byte[] encoded = ManifestCodec.encode(manifest);
        byte[] truncated = Arrays.copyOf(encoded, Math.max(0, encoded.length - cut));
        assertThatThrownBy(() -> ManifestCodec.decode(truncated)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("not a manifest");
    }

    @Property
    void anAlteredManifestIsRefusedOrDecodesToAnotherManifest(@ForAll("manifests") Manifest manifest,
                                                              @ForAll @IntRange(max = 100_000) int where, @ForAll @IntRange(min = 1, max = 255) int flip) {
        byte[] altered = ManifestCodec.encode(manifest);
        altered[where % altered.length] ^= (byte) flip;
        assertOnlyEncodingsDecode(altered);
        try {
            assertThat(ManifestCodec.decode(altered)).isNotEqualTo(manifest);
        } catch (IllegalArgumentException refused) {
            assertThat(refused).hasMessageStartingWith("not a manifest");
        }
    }

    @Property
    void randomBytesAreNeverTakenForSomethingElse(@ForAll byte[] bytes, @ForAll boolean withHeader) {
        if (withHeader && bytes.length >= 6) System.arraycopy(new byte[] {'S', 'T', 'M', 'F', 1, 0}, 0, bytes, 0, 6);
        assertOnlyEncodingsDecode(bytes);
    }

    /** Either refused with IllegalArgumentException, or the bytes are exactly the encoding of what they decode to. */
    private static void assertOnlyEncodingsDecode(byte[] bytes) {
        Manifest decoded;
        try {
            decoded = ManifestCodec.decode(bytes);
        } catch (IllegalArgumentException refused) {
            return;
        }
        assertThat(ManifestCodec.encode(decoded)).isEqualTo(bytes);
    }
}
