package io.stasis.templates.oci;

import static io.stasis.templates.oci.TestImages.platforms;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RegistryClient} against {@link FakeRegistry} on loopback: pulls by tag and digest through
 * indexes, every digest checked, the Bearer and Basic flows, and each failure the kind it is.
 */
class RegistryClientTest {
    static final TestImages.Image IMAGE = TestImages.image(ImageArchiveTest.BASE, ImageArchiveTest.APP);

    @TempDir
    Path spoolParent;
    FakeRegistry registry;
    RegistryClient client;

    @BeforeEach
    void start() throws IOException {
        registry = FakeRegistry.start();
        registry.put("team/app", "1.0", IMAGE);
        client = new RegistryClient(spoolParent, 1 << 20, Platform.LINUX_AMD64, Duration.ofSeconds(10));
    }

    @AfterEach
    void stop() throws IOException {
        client.close();
        registry.close();
        try (Stream<Path> left = Files.list(spoolParent)) {
            assertThat(left.toList()).as("spool directories left behind").isEmpty();
        }
    }

    ImageReference ref(String repoAndReference) {
        return ImageReference.parse("oci://" + registry.host() + "/" + repoAndReference);
    }

    @Test
    void pullsByTagAndByDigestAndGivesWhatAnArchiveGives() throws IOException {
        try (OciImage byTag = client.pull(ref("team/app:1.0"), Optional.empty());
             OciImage byDigest = client.pull(ref("team/app@" + IMAGE.manifest().digest()), Optional.empty());
             OciImage fromArchive = new ImageArchive(spoolParent, 1 << 20, Platform.LINUX_AMD64)
                     .read(new java.io.ByteArrayInputStream(TestImages.ociLayout(IMAGE)), "upload")) {
            assertThat(byTag.source()).isEqualTo("oci://" + registry.host() + "/team/app:1.0");
            assertThat(byTag.manifestDigest()).hasValue(IMAGE.manifest().digest());
            assertThat(byTag.config()).isEqualTo(fromArchive.config());
            assertThat(byTag.layers()).extracting(Layer::digest).isEqualTo(fromArchive.layers().stream().map(Layer::digest).toList());
            assertThat(ImageArchiveTest.names(byTag.layers().get(1))).containsExactly("srv/", "srv/app");
            assertThat(byDigest.id()).isEqualTo(byTag.id());
        }
        assertThat(registry.requestsFor("/manifests/")).extracting(FakeRegistry.Request::path)
                .containsExactly("/v2/team/app/manifests/1.0", "/v2/team/app/manifests/" + IMAGE.manifest().digest());
    }

    @Test
    void anIndexIsFollowedToLinuxAmd64() throws IOException {
        var arm = TestImages.image("arm64", TestImages.Packing.GZIP, TestImages.defaults(), ImageArchiveTest.BASE);
        registry.put("team/multi", "arm-only", arm);
        registry.put("team/multi", "amd", IMAGE);
        registry.manifest("team/multi", "latest", TestImages.index(platforms(arm.manifest(), "linux/arm64", IMAGE.manifest(), "linux/amd64")));

        try (OciImage image = client.pull(ref("team/multi"), Optional.empty())) {
            assertThat(image.manifestDigest()).hasValue(IMAGE.manifest().digest());
        }
        assertThat(registry.requestsFor("/blobs/" + arm.config().digest())).as("nothing of another platform").isEmpty();
    }

    @Test
    void aLyingBlobOrManifestIsRefusedNamingIt() {
        var layer = IMAGE.layers().get(1);
        byte[] forged = layer.bytes().clone();
        forged[forged.length / 2] ^= 1;
        registry.lie(layer.digest().toString(), forged);

        assertThatThrownBy(() -> client.pull(ref("team/app:1.0"), Optional.empty())).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(ImageException.Reason.DIGEST_MISMATCH);
            assertThat(e.subject()).isEqualTo(layer.digest().toString());
            assertThat(e).hasMessageStartingWith("layer " + layer.digest() + ": its content hashes to " + Digest.of(forged));
        });

        registry.lie(IMAGE.manifest().digest().toString(), TestImages.image(ImageArchiveTest.APP).manifest().bytes());
        assertThatThrownBy(() -> client.pull(ref("team/app@" + IMAGE.manifest().digest()), Optional.empty()))
                .isInstanceOfSatisfying(ImageException.class, e -> {
                    assertThat(e.reason()).isEqualTo(ImageException.Reason.DIGEST_MISMATCH);
                    assertThat(e).hasMessageContaining("manifest " + IMAGE.manifest().digest() + ": its content hashes to");
                });

        registry.claimContentDigest("1.0", Digest.of(new byte[1]).toString());
        assertThatThrownBy(() -> client.pull(ref("team/app:1.0"), Optional.empty())).isInstanceOfSatisfying(ImageException.class,
                e -> assertThat(e).hasMessageContaining("as the registry's Docker-Content-Digest says"));
    }

    @Test
    void theBearerFlowGetsATokenOncePerPullWithCredentialsWhenGiven() throws IOException {
        registry.auth = FakeRegistry.Auth.BEARER_ANONYMOUS;
        try (OciImage image = client.pull(ref("team/app:1.0"), Optional.empty())) {
            assertThat(image.layers()).hasSize(2);
        }
        assertThat(registry.requestsFor("/token")).singleElement().satisfies(r -> {
            assertThat(r.path()).isEqualTo("/token?service=fake-registry&scope=repository:team/app:pull");
            assertThat(r.authorization()).isNull();
        });

        registry.auth = FakeRegistry.Auth.BEARER_WITH_CREDENTIALS;
        assertThatThrownBy(() -> client.pull(ref("team/app:1.0"), Optional.empty())).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(ImageException.Reason.UNAUTHORIZED);
            assertThat(e).hasMessageContaining("refused anonymous access (HTTP 401)");
        });
        assertThatThrownBy(() -> client.pull(ref("team/app:1.0"), Optional.of(new RegistryCredentials("puller", "wrong"))))
                .isInstanceOfSatisfying(ImageException.class, e -> assertThat(e).hasMessageContaining("refused the credentials given"));
        try (OciImage image = client.pull(ref("team/app:1.0"), Optional.of(new RegistryCredentials("puller", "s3cret")))) {
            assertThat(image.layers()).hasSize(2);
        }
    }

    @Test
    void basicCredentialsAreSentWhenTheRegistryAsks() throws IOException {
        registry.auth = FakeRegistry.Auth.BASIC;

        assertThatThrownBy(() -> client.pull(ref("team/app:1.0"), Optional.empty())).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(ImageException.Reason.UNAUTHORIZED);
            assertThat(e).hasMessageContaining("the registry wants a user name and password (Basic)");
        });
        try (OciImage image = client.pull(ref("team/app:1.0"), Optional.of(new RegistryCredentials("puller", "s3cret")))) {
            assertThat(image.layers()).hasSize(2);
        }
        assertThatThrownBy(() -> client.pull(ref("team/app:1.0"), Optional.of(new RegistryCredentials("puller", "nope"))))
                .isInstanceOfSatisfying(ImageException.class, e -> assertThat(e).hasMessageContaining("refused access with the credentials given (HTTP 401"));
    }

    @Test
    void redirectsAreFollowedWithoutTheAuthorizationAndATokenRealmOverPlainHttpElsewhereIsRefused() throws IOException {
        registry.auth = FakeRegistry.Auth.BEARER_WITH_CREDENTIALS;
        registry.redirectBlobs = true;
        try (OciImage image = client.pull(ref("team/app:1.0"), Optional.of(new RegistryCredentials("puller", "s3cret")))) {
            assertThat(image.layers()).hasSize(2);
        }
        assertThat(registry.requestsFor("/storage/")).hasSize(3).allSatisfy(r -> assertThat(r.authorization()).isNull());

        registry.realmOverride = "http://auth.example.com/token";
        assertThatThrownBy(() -> client.pull(ref("team/app:1.0"), Optional.of(new RegistryCredentials("puller", "s3cret"))))
                .isInstanceOfSatisfying(ImageException.class, e ->
                        assertThat(e).hasMessageContaining("refusing http://auth.example.com (https only, except for a loopback registry or with insecure)"));
    }

    @Test
    void missingImagesServerErrorsAndSilentBodiesAreTheirOwnKindOfFailure() {
        assertThatThrownBy(() -> client.pull(ref("team/app:2.0"), Optional.empty())).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(ImageException.Reason.NOT_FOUND);
            assertThat(e).hasMessage("image not found: " + ref("team/app:2.0") + " (HTTP 404, MANIFEST_UNKNOWN: manifest unknown)");
            assertThat(e.toStasisException().code().wireName()).isEqualTo("not_found");
        });
        var orphan = TestImages.image("amd64", TestImages.Packing.PLAIN, TestImages.defaults(), ImageArchiveTest.APP);
        registry.manifest("team/broken", "1", orphan.manifest()); // its blobs are not there
        assertThatThrownBy(() -> client.pull(ref("team/broken:1"), Optional.empty())).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(ImageException.Reason.NOT_FOUND);
            assertThat(e).hasMessageStartingWith("config " + orphan.config().digest() + " not found in");
        });

        registry.failWith500 = true;
        assertThatThrownBy(() -> client.pull(ref("team/app:1.0"), Optional.empty())).isInstanceOfSatisfying(ImageException.class, e -> {
            assertThat(e.reason()).isEqualTo(ImageException.Reason.UNAVAILABLE);
            assertThat(e).hasMessageContaining("the registry answered HTTP 500, UNKNOWN: disk on fire");
        });

        registry.failWith500 = false;
        registry.stallBlobs = true;
        try (var impatient = new RegistryClient(spoolParent, 1 << 20, Platform.LINUX_AMD64, Duration.ofSeconds(1))) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> impatient.pull(ref("team/app:1.0"), Optional.empty())).isInstanceOfSatisfying(ImageException.class, e -> {
                assertThat(e.reason()).isEqualTo(ImageException.Reason.UNAVAILABLE);
                assertThat(e).hasMessageContaining("no data for 1 s");
            });
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        }
    }

    @Test
    void imagesOverTheLimitAreRefused() {
        try (var small = new RegistryClient(spoolParent, 500, Platform.LINUX_AMD64, Duration.ofSeconds(10))) {
            assertThatThrownBy(() -> small.pull(ref("team/app:1.0"), Optional.empty())).isInstanceOfSatisfying(ImageException.class,
                    e -> assertThat(e.reason()).isEqualTo(ImageException.Reason.TOO_LARGE));
        }
    }
}
