package io.stasis.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import java.net.URI;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class BucketMountTest {
    private static final BucketCredentials KEY = new BucketCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");

    private static BucketMount mount() {
        return BucketMount.of(new BucketMountId("sbx_abc-0"), URI.create("http://127.0.0.1:9000"), "data-bucket", KEY);
    }

    @Test
    void secretIsNeverShown() {
        var spec = mount().withPrefix("datasets/2026");
        assertThat(spec.toString()).contains("AKIDEXAMPLE", "data-bucket", "datasets/2026").doesNotContain(KEY.secretAccessKey());
        assertThat(KEY.toString()).doesNotContain(KEY.secretAccessKey());
    }

    @Test
    void bucketPathJoinsThePrefix() {
        assertThat(mount().bucketPath()).isEqualTo("data-bucket");
        assertThat(mount().withPrefix("a/b.c").bucketPath()).isEqualTo("data-bucket/a/b.c");
    }

    @ParameterizedTest
    @ValueSource(strings = {"/a", "a/", "a//b", "a/../b", "..", ".", "a b", "a\nb", "a:b", "a\\b", "ä"})
    void badPrefixesAreRefused(String prefix) {
        assertInvalid(() -> mount().withPrefix(prefix), "mounts.prefix");
    }

    @ParameterizedTest
    @ValueSource(strings = {"ftp://host", "http://", "http://user:pw@host", "http://host/path", "http://host?x=1",
            "http://host#f", "file:///etc/passwd", "http://ho st"})
    void badEndpointsAreRefused(String endpoint) {
        URI uri;
        try {
            uri = URI.create(endpoint);
        } catch (IllegalArgumentException notEvenAUri) {
            return;
        }
        assertInvalid(() -> BucketMount.of(new BucketMountId("m"), uri, "bucket", KEY), "mounts.endpoint");
    }

    @ParameterizedTest
    @ValueSource(strings = {"ab", "Bucket", "-bucket", "bucket-", "bu_cket", "b/c"})
    void badBucketsAreRefused(String bucket) {
        assertInvalid(() -> BucketMount.of(new BucketMountId("m"), URI.create("https://s3.example.com"), bucket, KEY), "mounts.bucket");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a.b", "a/b", "../x", "with space", "0123456789012345678901234567890123456789012345678901234567890123456789"})
    void badIdsAreRefused(String id) {
        assertInvalid(() -> new BucketMountId(id), "mounts.id");
        assertThat(BucketMountId.isValid(id)).isFalse();
    }

    @Test
    void credentialsThatCouldEscapeAConfigFileAreRefused() {
        assertInvalid(() -> new BucketCredentials("AKID", "sec\nret"), "mounts.credentials.secretAccessKey");
        assertInvalid(() -> new BucketCredentials("AKID", " secret"), "mounts.credentials.secretAccessKey");
        assertInvalid(() -> new BucketCredentials("AK ID", "secret"), "mounts.credentials.accessKeyId");
        assertInvalid(() -> new BucketCredentials("", "secret"), "mounts.credentials.accessKeyId");
    }

    @Test
    void credentialsComeFromASecretValueWithoutShowingIt() {
        assertThat(BucketCredentials.fromSecretValue("s3-key", "AKID:se:cr/et+\n")).isEqualTo(new BucketCredentials("AKID", "se:cr/et+"));
        for (String bad : List.of("no-colon-secret", ":secret", "AKID:", "AKID:two\nlines"))
            assertThatThrownBy(() -> BucketCredentials.fromSecretValue("s3-key", bad)).isInstanceOfSatisfying(StasisException.class, e -> {
                assertThat(e.details()).containsEntry("field", "mounts.credentialsSecret");
                assertThat(e.getMessage()).contains("s3-key").doesNotContain(bad);
            });
    }

    private static void assertInvalid(Runnable construct, String field) {
        assertThatThrownBy(construct::run).isInstanceOfSatisfying(StasisException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST);
            assertThat(e.details()).containsEntry("field", field);
        });
    }
}
