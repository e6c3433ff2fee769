package io.stasis.templates.oci;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ImageReferenceTest {
    static final String DIGEST = "sha256:" + "ab".repeat(32);

    @Test
    void referencesNameTheRegistryTheRepositoryAndATagOrDigest() {
        var local = ImageReference.parse("oci://127.0.0.1:5000/team/app:1.2");
        var hub = ImageReference.parse("docker.io/library/debian@" + DIGEST);
        var both = ImageReference.parse("registry.example.com/a/b/c:v1@" + DIGEST);
        var bare = ImageReference.parse("localhost/app");

        assertThat(local).isEqualTo(new ImageReference("127.0.0.1:5000", "team/app", Optional.of("1.2"), Optional.empty()));
        assertThat(local.reference()).isEqualTo("1.2");
        assertThat(local.apiBase(false)).isEqualTo(URI.create("http://127.0.0.1:5000"));
        assertThat(hub.reference()).isEqualTo(DIGEST);
        assertThat(hub.apiBase(false)).isEqualTo(URI.create("https://registry-1.docker.io"));
        assertThat(both.reference()).as("the digest wins").isEqualTo(DIGEST);
        assertThat(both.apiBase(false)).isEqualTo(URI.create("https://registry.example.com"));
        assertThat(both.apiBase(true)).isEqualTo(URI.create("http://registry.example.com"));
        assertThat(bare.reference()).isEqualTo("latest");
        assertThat(bare.isLoopback()).isTrue();
        assertThat(ImageReference.parse("[::1]:5000/x").isLoopback()).isTrue();
        assertThat(both.toString()).isEqualTo("oci://registry.example.com/a/b/c:v1@" + DIGEST);
    }

    @Test
    void wrongReferencesSayWhatIsWrong() {
        assertMalformed("debian:12", "not REGISTRY/REPOSITORY");
        assertMalformed("library/debian:12", "name the registry first, e.g. docker.io/library/library");
        assertMalformed("example.com/Team/app", "'Team' is not a repository path component");
        assertMalformed("example.com/app:-bad", "'-bad' is not a tag");
        assertMalformed("example.com/app@sha256:1234", "is not a digest");
        assertMalformed("exa_mple.com/app", "is not a registry host[:port]");
        assertThatThrownBy(() -> ImageReference.parse("example.com/app@sha512:" + "ab".repeat(64)))
                .isInstanceOfSatisfying(ImageException.class, e -> assertThat(e.reason()).isEqualTo(ImageException.Reason.UNSUPPORTED));
    }

    private static void assertMalformed(String text, String message) {
        assertThatThrownBy(() -> ImageReference.parse(text)).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(ImageException.Reason.MALFORMED);
            assertThat(e.getMessage()).contains(message);
        });
    }
}
