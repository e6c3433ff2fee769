package io.stasis.templates.oci;

import static io.stasis.templates.oci.TestImages.platforms;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ImageArchive}: both archive kinds, platform choice, verification of every blob, limits, and a spool that never stays behind. */
class ImageArchiveTest {
    static final byte[] BASE = new TarBuilder().dir("etc/").file("etc/os-release", "ID=test\n".getBytes(StandardCharsets.UTF_8)).end().bytes();
    static final byte[] APP = new TarBuilder().dir("srv/").file("srv/app", "#!/bin/sh\n".getBytes(StandardCharsets.UTF_8)).end().bytes();

    @TempDir
    Path spoolParent;

    @AfterEach
    void nothingSpooledIsLeft() throws IOException {
        try (Stream<Path> left = Files.list(spoolParent)) {
            assertThat(left.toList()).as("spool directories left behind").isEmpty();
        }
    }

    ImageArchive archive(long limit) {
        return new ImageArchive(spoolParent, limit, Platform.LINUX_AMD64);
    }

    @Test
    void anOciLayoutGivesTheConfigDefaultsAndTheLayersInOrder() throws IOException {
        var built = TestImages.image(BASE, APP);

        try (OciImage image = archive(1 << 20).read(new ByteArrayInputStream(TestImages.ociLayout(built)), "upload")) {
            assertThat(image.source()).isEqualTo("upload");
            assertThat(image.manifestDigest()).hasValue(built.manifest().digest());
            assertThat(image.id()).isEqualTo(built.config().digest());
            var config = image.config();
            assertThat(config.env()).containsExactly("PATH=/usr/local/bin:/usr/bin:/bin", "GREETING=hello=world");
            assertThat(config.envMap()).containsEntry("GREETING", "hello=world");
            assertThat(config.workingDir()).hasValue("/srv/app");
            assertThat(config.user()).hasValue("1000:1000");
            assertThat(config.entrypoint()).containsExactly("/bin/entry");
            assertThat(config.cmd()).containsExactly("serve", "--port", "8080");
            assertThat(config.command()).containsExactly("/bin/entry", "serve", "--port", "8080");
            assertThat(image.layers()).extracting(Layer::digest).containsExactly(built.layers().get(0).digest(), built.layers().get(1).digest());
            assertThat(names(image.layers().get(1))).containsExactly("srv/", "srv/app");
            assertThat(Files.list(image.spool().dir()).count()).as("only the layers stay spooled").isEqualTo(2);
        }
    }

    @Test
    void theLinuxAmd64ImageIsPickedFromNestedMultiPlatformIndexes() throws IOException {
        var amd64 = TestImages.image(BASE, APP);
        var arm64 = TestImages.image("arm64", TestImages.Packing.GZIP, TestImages.defaults(), BASE);
        var attestation = new TestImages.Blob(Descriptor.OCI_MANIFEST, "{}".getBytes(StandardCharsets.UTF_8));
        var inner = TestImages.index(platforms(arm64.manifest(), "linux/arm64", attestation, "unknown/unknown", amd64.manifest(), "linux/amd64"));
        var outer = TestImages.index(platforms(inner, null));
        var blobs = new ArrayList<TestImages.Blob>(List.of(inner, attestation));
        blobs.addAll(arm64.blobs());
        blobs.addAll(amd64.blobs());

        try (OciImage image = archive(1 << 20).read(new ByteArrayInputStream(TestImages.ociLayout(outer, blobs)), "upload")) {
            assertThat(image.manifestDigest()).hasValue(amd64.manifest().digest());
            assertThat(image.layers()).hasSize(2);
        }
        var armOnly = TestImages.index(platforms(arm64.manifest(), "linux/arm64"));
        assertRefused(TestImages.ociLayout(armOnly, arm64.blobs()), ImageException.Reason.UNSUPPORTED, "has no linux/amd64 image; it has "
                + arm64.manifest().digest() + " (linux/arm64)");
    }

    @Test
    void aDockerArchiveIsReadWithItsSymlinkedDuplicateLayersAndGzipOuterCompression() throws IOException {
        var built = TestImages.image("amd64", TestImages.Packing.PLAIN, TestImages.defaults(), BASE, APP, BASE);

        try (OciImage image = archive(1 << 20).read(new ByteArrayInputStream(TestImages.gzip(TestImages.dockerArchive(built))), "upload")) {
            assertThat(image.manifestDigest()).isEmpty();
            assertThat(image.id()).isEqualTo(built.config().digest());
            assertThat(image.config().cmd()).containsExactly("serve", "--port", "8080");
            assertThat(image.layers()).extracting(Layer::digest).containsExactly(Digest.of(BASE), Digest.of(APP), Digest.of(BASE));
            assertThat(names(image.layers().get(2))).containsExactly("etc/", "etc/os-release");
        }
    }

    @Test
    void zstdLayersAreRead() throws IOException {
        var built = TestImages.image("amd64", TestImages.Packing.ZSTD, TestImages.defaults(), APP);

        try (OciImage image = archive(1 << 20).read(new ByteArrayInputStream(TestImages.ociLayout(built)), "upload")) {
            assertThat(names(image.layers().getFirst())).containsExactly("srv/", "srv/app");
        }
    }

    @Test
    void aBlobThatIsNotWhatItsDigestSaysIsRefusedNamingIt() {
        var built = TestImages.image(BASE, APP);
        var forged = new TestImages.Blob(built.layers().get(1).mediaType(), TestImages.gzip(BASE)); // other content...
        byte[] layout = TestImages.ociLayout(TestImages.index(platforms(built.manifest(), null)), List.of(built.manifest(), built.config(),
                built.layers().get(0)));
        byte[] lying = appendMember(layout, "blobs/sha256/" + built.layers().get(1).digest().hex(), forged.bytes()); // ...under its name

        assertThatThrownBy(() -> archive(1 << 20).read(new ByteArrayInputStream(lying), "upload"))
                .isInstanceOfSatisfying(ImageException.class, e -> {
                    assertThat(e.reason()).isEqualTo(ImageException.Reason.DIGEST_MISMATCH);
                    assertThat(e.subject()).isEqualTo(built.layers().get(1).digest().toString());
                    assertThat(e).hasMessageContaining("layer " + built.layers().get(1).digest() + ": its content hashes to " + forged.digest());
                });
    }

    @Test
    void aDockerArchiveLayerThatIsNotItsDiffIdIsRefused() {
        var built = TestImages.image("amd64", TestImages.Packing.PLAIN, TestImages.defaults(), BASE);
        byte[] archive = TestImages.dockerArchive(built);
        byte[] tampered = replaceOnce(archive, "ID=test".getBytes(StandardCharsets.UTF_8), "ID=evil".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> archive(1 << 20).read(new ByteArrayInputStream(tampered), "upload"))
                .isInstanceOfSatisfying(ImageException.class, e -> {
                    assertThat(e.reason()).isEqualTo(ImageException.Reason.DIGEST_MISMATCH);
                    assertThat(e).hasMessageContaining("layer '" + String.format("%064x", 1) + "/layer.tar'")
                            .hasMessageContaining("where the config's diff id is " + Digest.of(BASE));
                });
    }

    @Test
    void archivesOverTheLimitAreRefusedAsTheyStreamCompressedOrNot() {
        byte[] zeros = new byte[50 << 20];
        byte[] bomb = TestImages.gzip(new TarBuilder().file("blobs/sha256/zeros", zeros).end().bytes()); // 50 MiB in ~50 KiB
        var manySmall = new TarBuilder();
        for (int i = 0; i < 200; i++) manySmall.file("blobs/sha256/" + i, new byte[10_000]);
        byte[] bigInAll = TestImages.gzip(manySmall.end().bytes());

        assertThat(bomb.length).isLessThan(1 << 20);
        assertThatThrownBy(() -> archive(1 << 20).read(new ByteArrayInputStream(bomb), "upload")).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(ImageException.Reason.TOO_LARGE);
            assertThat(e.subject()).isEqualTo("tar entry 'blobs/sha256/zeros'");
            assertThat(e.toStasisException().code().wireName()).isEqualTo("payload_too_large");
        });
        assertRefused(bigInAll, 1 << 20, ImageException.Reason.TOO_LARGE, "the image is larger than the spool limit of 1048576 bytes");
        assertRefused(TestImages.ociLayout(TestImages.image(BASE)), 1000, ImageException.Reason.TOO_LARGE, "spool limit of 1000 bytes");
    }

    @Test
    void whatIsNoImageIsRefusedSayingWhatItHolds() {
        byte[] notAnImage = new TarBuilder().file("README", new byte[1]).file("data.bin", new byte[1]).end().bytes();
        var built = TestImages.image(BASE);
        byte[] missingLayer = TestImages.ociLayout(TestImages.index(platforms(built.manifest(), null)), List.of(built.manifest(), built.config()));
        var two = TestImages.index(platforms(built.manifest(), null, TestImages.image(APP).manifest(), null));

        assertRefused(notAnImage, ImageException.Reason.MALFORMED, "neither an OCI image layout (oci-layout, index.json) nor a docker-archive"
                + " (manifest.json); it holds README, data.bin");
        assertRefused(missingLayer, ImageException.Reason.MALFORMED, "layer " + built.layers().getFirst().digest() + " 'blobs/sha256/"
                + built.layers().getFirst().digest().hex() + "' is missing from the archive");
        assertRefused(TestImages.ociLayout(two, built.blobs()), ImageException.Reason.UNSUPPORTED, "holds 2 images");
        assertRefused("not a tar at all, just text that goes on for more than one block ".repeat(20).getBytes(StandardCharsets.UTF_8),
                ImageException.Reason.MALFORMED, "tar header at byte 0");
    }

    @Test
    void anImageForAnotherArchitectureOrNotAContainerImageIsRefused() {
        var arm = TestImages.image("arm64", TestImages.Packing.GZIP, TestImages.defaults(), BASE);
        var built = TestImages.image(BASE);
        var helm = new TestImages.Blob("application/vnd.cncf.helm.config.v1+json", "{}".getBytes(StandardCharsets.UTF_8));
        var chart = TestImages.manifest(helm, built.layers());

        assertRefused(TestImages.ociLayout(arm), ImageException.Reason.UNSUPPORTED, "the image is for linux/arm64, sandboxes here run linux/amd64");
        assertRefused(TestImages.ociLayout(TestImages.index(platforms(chart, null)), List.of(chart, helm, built.layers().getFirst())),
                ImageException.Reason.UNSUPPORTED, "not a container image: its config is application/vnd.cncf.helm.config.v1+json");
    }

    // ---

    private void assertRefused(byte[] archive, ImageException.Reason reason, String message) {
        assertRefused(archive, 1 << 20, reason, message);
    }

    private void assertRefused(byte[] archive, long limit, ImageException.Reason reason, String message) {
        assertThatThrownBy(() -> archive(limit).read(new ByteArrayInputStream(archive), "upload"))
                .isInstanceOfSatisfying(ImageException.class, e -> {
                    assertThat(e.reason()).isEqualTo(reason);
                    assertThat(e.getMessage()).contains(message);
                });
    }

    /** The member names of a layer, as read from it. */
    static List<String> names(Layer layer) throws IOException {
        var names = new ArrayList<String>();
        try (InputStream in = layer.open()) {
            var reader = new TarReader(in);
            for (var e = reader.next(); e.isPresent(); e = reader.next()) names.add(e.get().name());
        }
        return names;
    }

    /** Adds a member before the end blocks of an archive made by {@link TarBuilder}. */
    static byte[] appendMember(byte[] archive, String name, byte[] data) {
        byte[] body = Arrays.copyOf(archive, archive.length - 1024);
        byte[] member = new TarBuilder().file(name, data).end().bytes();
        byte[] out = Arrays.copyOf(body, body.length + member.length);
        System.arraycopy(member, 0, out, body.length, member.length);
        return out;
    }

    static byte[] replaceOnce(byte[] haystack, byte[] needle, byte[] with) {
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            if (Arrays.equals(haystack, i, i + needle.length, needle, 0, needle.length)) {
                byte[] out = haystack.clone();
                System.arraycopy(with, 0, out, i, with.length);
                return out;
            }
        }
        throw new AssertionError("not found");
    }
}
