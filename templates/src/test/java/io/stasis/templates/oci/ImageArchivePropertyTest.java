package io.stasis.templates.oci;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterProperty;
import net.jqwik.api.lifecycle.BeforeProperty;

/**
 * Whatever an upload holds, {@link ImageArchive} returns an image or throws {@link ImageException},
 * nothing else, and leaves no spool behind: real archives of both kinds with bytes flipped (tar
 * checksums fixed so the damage reaches the JSON and the blobs), cut short, or gzip-compressed
 * after the damage.
 */
class ImageArchivePropertyTest {
    static final TestImages.Image IMAGE = TestImages.image(ImageArchiveTest.BASE, ImageArchiveTest.APP);
    static final List<byte[]> ARCHIVES = List.of(TestImages.ociLayout(IMAGE), TestImages.dockerArchive(
            TestImages.image("amd64", TestImages.Packing.PLAIN, TestImages.defaults(), ImageArchiveTest.BASE, ImageArchiveTest.BASE)));
    static final List<List<Integer>> HEADERS = ARCHIVES.stream().map(TarReaderPropertyTest.Samples::headerOffsets).toList();
    private Path spoolParent;

    @BeforeProperty
    void makeSpoolParent() throws IOException {
        spoolParent = Files.createTempDirectory("image-archive-property-");
    }

    @AfterProperty
    void removeSpoolParent() throws IOException {
        io.stasis.host.FileTrees.deleteRecursively(spoolParent);
    }

    @Property(tries = 1500)
    void damagedArchivesGiveAnImageOrAnImageExceptionAndLeaveNothing(@ForAll @IntRange(min = 0, max = 1) int sample,
                                                                     @ForAll @Size(min = 1, max = 6) List<@IntRange(min = 0, max = 1 << 20) Integer> positions,
                                                                     @ForAll byte flip, @ForAll boolean fixChecksums, @ForAll boolean gzip,
                                                                     @ForAll @IntRange(min = 0, max = 1 << 20) int cut) throws IOException {
        byte[] damaged = ARCHIVES.get(sample).clone();
        for (int at : positions) damaged[at % damaged.length] ^= (flip == 0 ? 1 : flip);
        if (fixChecksums) for (int header : HEADERS.get(sample)) TarBuilder.checksum(damaged, header);
        if (cut % 4 == 0) damaged = Arrays.copyOf(damaged, cut % damaged.length);
        if (gzip) damaged = TestImages.gzip(damaged);

        try (OciImage image = new ImageArchive(spoolParent, 1 << 20, Platform.LINUX_AMD64).read(new ByteArrayInputStream(damaged), "upload")) {
            for (Layer layer : image.layers()) ImageArchiveTest.names(layer); // a layer may still be damaged: reading it throws ImageException only
        } catch (ImageException expected) {
            assertThat(expected.getMessage()).isNotBlank();
        } catch (UncheckedIOException e) {
            throw new AssertionError("an IOException escaped", e);
        }
        try (Stream<Path> left = Files.list(spoolParent)) {
            assertThat(left.toList()).isEmpty();
        }
    }
}
