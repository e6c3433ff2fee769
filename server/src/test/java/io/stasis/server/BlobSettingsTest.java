package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The blob store flags: defaults, each flag, switches without a value, and refusals naming the flag. */
class BlobSettingsTest {

    @Test
    void theDefaultIsALocalStoreUnderTheDataDirectory() {
        var config = ServerConfig.parse("--data-dir", "/tmp/stasis-x");
        assertThat(config.blobs().kind()).isEqualTo("local");
        assertThat(config.blobs().localDir(config.dataDir())).isEqualTo(Path.of("/tmp/stasis-x/blobs"));
        assertThat(config.blobs().hibernateDurable()).isFalse();
        assertThat(config.blobs().uploadConcurrency()).isEqualTo(2);
        assertThat(config.blobs().gcInterval()).hasValue(Duration.ofHours(6));
        assertThat(config.blobs().backgroundUploads()).isTrue();
    }

    @Test
    void checkpointsAreUploadedInTheBackgroundOrOnRequest() {
        assertThat(ServerConfig.parse("--checkpoint-uploads", "on-request").blobs().backgroundUploads()).isFalse();
        assertThat(ServerConfig.parse("--checkpoint-uploads=background").blobs().backgroundUploads()).isTrue();
        assertThatThrownBy(() -> ServerConfig.parse("--checkpoint-uploads", "never")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("--checkpoint-uploads").hasMessageContaining("on-request");
    }

    @Test
    void theGcIntervalIsADurationOrNever() {
        assertThat(ServerConfig.parse("--blob-gc-interval", "90m").blobs().gcInterval()).hasValue(Duration.ofMinutes(90));
        assertThat(ServerConfig.parse("--blob-gc-interval=never").blobs().gcInterval()).isEmpty();
        assertThatThrownBy(() -> ServerConfig.parse("--blob-gc-interval", "10s")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("--blob-gc-interval").hasMessageContaining("at least 1m");
        assertThat(ServerConfig.parse("--blob-gc-grace", "0s").blobs().gcGrace()).isZero();
        assertThatThrownBy(() -> ServerConfig.parse("--blob-gc-interval", "often")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("--blob-gc-interval");
    }

    @Test
    void s3FlagsAndSwitches() {
        var config = ServerConfig.parse("--blob-store", "s3", "--s3-endpoint", "http://127.0.0.1:9000", "--s3-bucket", "stasis",
                "--s3-region=eu-west-1", "--s3-path-style", "false", "--hibernate-durable", "--upload-concurrency", "4", "--port", "0");
        var blobs = config.blobs();
        assertThat(blobs.kind()).isEqualTo("s3");
        assertThat(blobs.s3Endpoint()).hasValueSatisfying(u -> assertThat(u.toString()).isEqualTo("http://127.0.0.1:9000"));
        assertThat(blobs.s3Bucket()).hasValue("stasis");
        assertThat(blobs.s3Region()).isEqualTo("eu-west-1");
        assertThat(blobs.s3PathStyle()).isFalse();
        assertThat(blobs.hibernateDurable()).as("a switch without a value").isTrue();
        assertThat(blobs.uploadConcurrency()).isEqualTo(4);
        assertThat(config.port()).isZero();
        assertThat(ServerConfig.parse("--s3-path-style", "--blob-dir", "/b").blobs().s3PathStyle()).isTrue();
    }

    @Test
    void credentialsComeFromAFileNeverFromAFlagValue() throws Exception {
        Path file = Files.createTempFile("stasis-s3", ".txt");
        try {
            Files.writeString(file, "AKIDEXAMPLE\n  secret-value \n");
            var blobs = ServerConfig.parse("--blob-store", "s3", "--s3-bucket", "stasis", "--s3-credentials-file", file.toString()).blobs();
            assertThat(blobs.s3Credentials()).hasValueSatisfying(k -> assertThat(k).containsExactly("AKIDEXAMPLE", "secret-value"));
            assertThat(blobs.toString()).doesNotContain("secret-value");
        } finally {
            Files.delete(file);
        }
        assertThatThrownBy(() -> ServerConfig.parse("--s3-secret-access-key", "x")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("unknown flag");
    }

    @Test
    void badValuesAreRefused() {
        assertThatThrownBy(() -> ServerConfig.parse("--blob-store", "ftp")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("--blob-store").hasMessageContaining("'ftp'");
        assertThatThrownBy(() -> ServerConfig.parse("--blob-store", "s3")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessage("--blob-store s3 needs --s3-bucket");
        assertThatThrownBy(() -> ServerConfig.parse("--hibernate-durable", "maybe")).isInstanceOf(ServerConfig.UsageException.class)
                .hasMessageContaining("true or false");
        assertThat(ServerConfig.usage()).contains("--blob-store local|s3", "--hibernate-durable", "--s3-credentials-file");
    }
}
