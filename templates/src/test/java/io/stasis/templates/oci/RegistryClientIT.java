package io.stasis.templates.oci;

import static io.stasis.templates.oci.TestImages.platforms;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.stasis.testkit.DockerRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RegistryClient} against a real registry: Debian's docker-registry (distribution 2.8) on
 * 127.0.0.1, filled by this test through the v2 push API. Skipped where the package is not
 * installed ({@code apt-get install docker-registry}; ./stasis test installs it).
 */
@Tag("root")
class RegistryClientIT {
    @TempDir
    static Path dir;
    static DockerRegistry registry;
    static final TestImages.Image IMAGE = TestImages.image(ImageArchiveTest.BASE, ImageArchiveTest.APP);

    @BeforeAll
    static void start() throws Exception {
        assumeTrue(DockerRegistry.installed(), "docker-registry is not installed (apt-get install docker-registry)");
        registry = DockerRegistry.start(Files.createDirectories(dir.resolve("registry")));
        push("team/app", "1.0", IMAGE);
    }

    @AfterAll
    static void stop() {
        if (registry != null) registry.close();
    }

    RegistryClient client() {
        return new RegistryClient(dir, 64 << 20, Platform.LINUX_AMD64, Duration.ofSeconds(20));
    }

    ImageReference ref(String repoAndReference) {
        return ImageReference.parse("oci://" + registry.host() + "/" + repoAndReference);
    }

    @Test
    void pullsWhatWasPushedByTagAndByDigest() throws Exception {
        try (var client = client(); var byTag = client.pull(ref("team/app:1.0"), Optional.empty());
             var byDigest = client.pull(ref("team/app@" + IMAGE.manifest().digest()), Optional.empty())) {
            assertThat(byTag.manifestDigest()).hasValue(IMAGE.manifest().digest());
            assertThat(byTag.id()).isEqualTo(IMAGE.config().digest());
            assertThat(byTag.config().cmd()).containsExactly("serve", "--port", "8080");
            assertThat(byTag.layers()).extracting(Layer::digest).containsExactly(IMAGE.layers().get(0).digest(), IMAGE.layers().get(1).digest());
            assertThat(ImageArchiveTest.names(byDigest.layers().get(0))).containsExactly("etc/", "etc/os-release");
        }
    }

    @Test
    void aMultiPlatformIndexGivesTheLinuxAmd64Image() throws Exception {
        var arm = TestImages.image("arm64", TestImages.Packing.GZIP, TestImages.defaults(), ImageArchiveTest.APP);
        push("team/multi", arm.manifest().digest().toString(), arm);
        push("team/multi", IMAGE.manifest().digest().toString(), IMAGE);
        var index = TestImages.index(platforms(arm.manifest(), "linux/arm64", IMAGE.manifest(), "linux/amd64"));
        registry.pushManifest("team/multi", "2.0", index.mediaType(), index.bytes());

        try (var client = client(); var image = client.pull(ref("team/multi:2.0"), Optional.empty())) {
            assertThat(image.manifestDigest()).hasValue(IMAGE.manifest().digest());
            assertThat(image.config().architecture()).hasValue("amd64");
        }
    }

    @Test
    void anUnknownTagOrRepositoryIsImageNotFound() {
        try (var client = client()) {
            assertThatThrownBy(() -> client.pull(ref("team/app:nope"), Optional.empty())).isInstanceOfSatisfying(ImageException.class, e -> {
                assertThat(e.reason()).isEqualTo(ImageException.Reason.NOT_FOUND);
                assertThat(e).hasMessageStartingWith("image not found: " + ref("team/app:nope")).hasMessageContaining("MANIFEST_UNKNOWN");
            });
            assertThatThrownBy(() -> client.pull(ref("nobody/here:1"), Optional.empty())).isInstanceOfSatisfying(ImageException.class,
                    e -> assertThat(e.reason()).isEqualTo(ImageException.Reason.NOT_FOUND));
        }
    }

    /** Every blob of the image, then its manifest under {@code tag}. */
    private static void push(String repository, String tag, TestImages.Image image) throws Exception {
        registry.pushBlob(repository, image.config().bytes());
        for (var layer : image.layers()) registry.pushBlob(repository, layer.bytes());
        registry.pushManifest(repository, tag, image.manifest().mediaType(), image.manifest().bytes());
    }
}
