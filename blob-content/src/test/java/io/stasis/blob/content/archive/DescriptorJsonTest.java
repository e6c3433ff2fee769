package io.stasis.blob.content.archive;

import io.stasis.core.sandbox.RuntimeKind;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.stasis.core.blob.ManifestId;
import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointDescriptor;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.HeaderRule;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.IdlePolicy;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The durable checkpoint descriptor is a persisted format: descriptors written by any earlier
 * version sit in blob stores and must stay readable, and a change to what this version writes must
 * be deliberate. The golden files under {@code descriptors/} pin both: version 1 (no bucket mounts),
 * version 2 (with some), version 3 (a runtime other than runc) and version 4 (an age limit that puts to sleep). Regenerate them only with a new format version
 * ({@code -Dstasis.golden.write=true} writes them into the source tree).
 */
class DescriptorJsonTest {
    private static final Path GOLDEN_DIR = Path.of("src", "test", "resources", "descriptors");

    private static CheckpointDescriptor descriptor(List<SandboxBucket> buckets) {
        return descriptor(buckets, RuntimeKind.RUNC);
    }

    private static final LifecyclePolicy LIFECYCLE = new LifecyclePolicy(Optional.of(Duration.ofSeconds(15)), Optional.of(Duration.ofMinutes(2)),
            Optional.of(Duration.ofMinutes(30)), Optional.of(Duration.ofHours(12)), Optional.of(Duration.ofDays(30)),
            Optional.of(Duration.ofDays(7)), true, Optional.empty());
    private static final LifecyclePolicy SLEEPS_AT_MAX_AGE = LIFECYCLE.withMaxAge(Optional.of(Duration.ofMinutes(5)), IdlePolicy.Action.STANDBY,
            Optional.of(Duration.ofMinutes(5)));

    private static CheckpointDescriptor descriptor(List<SandboxBucket> buckets, RuntimeKind runtime) {
        return descriptor(buckets, runtime, LIFECYCLE);
    }

    private static CheckpointDescriptor descriptor(List<SandboxBucket> buckets, RuntimeKind runtime, LifecyclePolicy lifecycle) {
        // Every field given: the golden files must not follow the server's defaults.
        var allow = List.of(EgressRule.parse("pypi.org", "allow[0]"), EgressRule.parse("api.example.com", "allow[1]"),
                EgressRule.parse("10.1.0.0/16", "allow[2]"));
        var network = new NetworkPolicy(new EgressPolicy(EgressPolicy.Action.DENY, allow, List.of()),
                List.of(HeaderRule.of("api.example.com", Map.of("Authorization", "Bearer {{secret:API_TOKEN}}"), "rules[0]")));
        var layers = List.of(
                new CheckpointDescriptor.RootLayer(new CheckpointId("ckpt_base00000000000a"), Optional.empty(), ManifestId.parse("a".repeat(64)), 4096),
                new CheckpointDescriptor.RootLayer(new CheckpointId("ckpt_top000000000000b"), Optional.of(new CheckpointId("ckpt_base00000000000a")),
                        ManifestId.parse("b".repeat(64)), 512));
        return new CheckpointDescriptor(new CheckpointId("ckpt_top000000000000b"), TenantId.DEFAULT, new SandboxId("sbx_golden0000000001"),
                Optional.of("before-deploy"), true, Checkpoint.Purpose.USER, Instant.parse("2026-11-02T10:15:30Z"), "python",
                new Resources(1.5, 2048, 512, 10240), Map.of("LANG", "C.UTF-8"), Map.of("owner", "agent-7"), lifecycle, network, layers,
                Optional.of(ManifestId.parse("c".repeat(64))), 123_456_789L, 45_678_901L, buckets, runtime);
    }

    private static final List<SandboxBucket> BUCKETS = List.of(new SandboxBucket("/mnt/data", URI.create("http://127.0.0.1:9000"),
            "us-east-1", "datasets", "team-a/", true, "S3_KEYS"));

    @Test
    void writesVersion1WithoutBucketsVersion2WithThemAndVersion3ForGvisor() throws IOException {
        assertThat(new String(DescriptorJson.encode(descriptor(List.of())), StandardCharsets.UTF_8)).isEqualTo(golden("v1.json"));
        assertThat(new String(DescriptorJson.encode(descriptor(BUCKETS)), StandardCharsets.UTF_8)).isEqualTo(golden("v2.json"));
        assertThat(new String(DescriptorJson.encode(descriptor(BUCKETS, RuntimeKind.GVISOR)), StandardCharsets.UTF_8)).isEqualTo(golden("v3.json"));
        assertThat(new String(DescriptorJson.encode(descriptor(BUCKETS, RuntimeKind.GVISOR, SLEEPS_AT_MAX_AGE)), StandardCharsets.UTF_8))
                .isEqualTo(golden("v4.json"));
    }

    @Test
    void readsEveryVersionWrittenBefore() throws IOException {
        assertThat(DescriptorJson.decode(golden("v1.json").getBytes(StandardCharsets.UTF_8))).isEqualTo(descriptor(List.of()));
        assertThat(DescriptorJson.decode(golden("v2.json").getBytes(StandardCharsets.UTF_8))).isEqualTo(descriptor(BUCKETS));
        assertThat(DescriptorJson.decode(golden("v3.json").getBytes(StandardCharsets.UTF_8))).isEqualTo(descriptor(BUCKETS, RuntimeKind.GVISOR));
        assertThat(DescriptorJson.decode(golden("v4.json").getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(descriptor(BUCKETS, RuntimeKind.GVISOR, SLEEPS_AT_MAX_AGE));
    }

    @Test
    void refusesAVersionItDoesNotKnow() {
        String future = golden("v4.json").replace("\"version\":4", "\"version\":5");
        assertThat(future).isNotEqualTo(golden("v4.json"));
        assertThatThrownBy(() -> DescriptorJson.decode(future.getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IOException.class).hasMessageContaining("descriptor version 5").hasMessageContaining("knows up to 4");
        assertThatThrownBy(() -> DescriptorJson.decode("{\"checkpointId\": \"ckpt_x\"}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(IOException.class).hasMessageContaining("descriptor version 0");
    }

    private static String golden(String name) {
        if (Boolean.getBoolean("stasis.golden.write")) {
            var d = switch (name) {
                case "v1.json" -> descriptor(List.of());
                case "v2.json" -> descriptor(BUCKETS);
                case "v3.json" -> descriptor(BUCKETS, RuntimeKind.GVISOR);
                default -> descriptor(BUCKETS, RuntimeKind.GVISOR, SLEEPS_AT_MAX_AGE);
            };
            try {
                Files.createDirectories(GOLDEN_DIR);
                Files.write(GOLDEN_DIR.resolve(name), DescriptorJson.encode(d));
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
        try (InputStream in = DescriptorJsonTest.class.getResourceAsStream("/descriptors/" + name)) {
            if (in == null) throw new AssertionError("golden file descriptors/" + name + " is missing");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
