package io.stasis.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.blob.content.archive.DescriptorJson;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointDescriptor;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A checkpoint descriptor keeps a sandbox's lifecycle and network in the API's shapes, and its codec
 * (in blob-content) reads them with a reader of its own: it must accept, refuse and default exactly
 * as the API's parsers do, with the same errors.
 */
class DescriptorReadsLikeApiTest {
    private static final String ABSENT = "<absent>";

    @ParameterizedTest
    @ValueSource(strings = {ABSENT, "null", "\"deny\"", "{}", "{\"egress\": null}", "{\"egress\": \"x\"}", "{\"extra\": 1}",
            "{\"egress\": {\"x\": 1}}", "{\"egress\": {\"default\": \"allow\"}}", "{\"egress\": {\"default\": \"maybe\"}}",
            "{\"egress\": {\"default\": 1}}", "{\"egress\": {\"allow\": \"x\"}}", "{\"egress\": {\"allow\": [1]}}",
            "{\"egress\": {\"allow\": [\"::1/128\"]}}", "{\"egress\": {\"allow\": [\"not a domain!\"]}}",
            "{\"egress\": {\"allow\": [\"*.example.com\", \"10.0.0.0/8\"], \"deny\": [\"ads.example.com\"]}}",
            "{\"rules\": \"x\"}", "{\"rules\": [1]}", "{\"rules\": [{\"domain\": 1}]}", "{\"rules\": [{\"domain\": \"a.com\"}]}",
            "{\"rules\": [{\"domain\": \"a.com\", \"headers\": {\"X\": 1}}]}", "{\"rules\": [{\"domain\": \"a.com\", \"x\": 1}]}",
            "{\"rules\": [{\"domain\": \"a.com\", \"headers\": {\"X-Key\": \"{{secret:K}}\"}}]}",
            "{\"egress\": {\"allow\": [\"a.com\"]}, \"rules\": [{\"domain\": \"a.com\", \"headers\": {\"X-Key\": \"{{secret:K}}\"}}]}",
            "{\"egress\": {\"allow\": [\"a.com\"]}, \"rules\": [{\"domain\": \"a.com\", \"headers\": {\"Host\": \"b\"}}]}"})
    void readsTheNetworkAsACreateDoes(String value) throws IOException {
        assertSameOutcome("network", value, n -> NetworkJson.parse(n, "network"), CheckpointDescriptor::network);
    }

    @ParameterizedTest
    @ValueSource(strings = {ABSENT, "null", "\"x\"", "{}", "{\"unknown\": 1}", "{\"autoResume\": 1}", "{\"autoResume\": false}",
            "{\"maxAge\": 5}", "{\"maxAge\": \"5 parsecs\"}", "{\"maxAge\": null}", "{\"pauseAfterIdle\": \"90s\", \"standbyAfterIdle\": \"1h\"}"})
    void readsTheLifecycleAsACreateDoes(String value) throws IOException {
        assertSameOutcome("lifecycle", value, n -> LifecycleJson.merge(LifecyclePolicy.DEFAULT, n), CheckpointDescriptor::lifecycle);
    }

    private static void assertSameOutcome(String field, String value, Function<JsonNode, Object> api,
                                          Function<CheckpointDescriptor, Object> read) throws IOException {
        var descriptor = (ObjectNode) Json.MAPPER.readTree(DescriptorJson.encode(descriptor()));
        var sandbox = (ObjectNode) descriptor.get("sandbox");
        if (value.equals(ABSENT)) sandbox.remove(field);
        else sandbox.set(field, Json.MAPPER.readTree(value));
        JsonNode given = sandbox.path(field);

        Object expected = null;
        Throwable expectedError = catchThrowable(() -> api.apply(given));
        if (expectedError == null) expected = api.apply(given);
        Object actual = null;
        Throwable actualError = catchThrowable(() -> DescriptorJson.decode(Json.MAPPER.writeValueAsBytes(descriptor)));
        if (actualError == null) actual = read.apply(DescriptorJson.decode(Json.MAPPER.writeValueAsBytes(descriptor)));

        if (expectedError == null) {
            assertThat(actualError).as("%s %s", field, value).isNull();
            assertThat(actual).isEqualTo(expected);
        } else {
            assertThat(actualError).as("%s %s", field, value).isNotNull().hasSameClassAs(expectedError).hasMessage(expectedError.getMessage());
        }
    }

    private static CheckpointDescriptor descriptor() {
        var layer = new CheckpointDescriptor.RootLayer(new CheckpointId("ckpt_base00000000000a"), Optional.empty(), ManifestId.parse("a".repeat(64)), 4096);
        return new CheckpointDescriptor(new CheckpointId("ckpt_base00000000000a"), TenantId.DEFAULT, new SandboxId("sbx_golden0000000001"),
                Optional.empty(), false, Checkpoint.Purpose.USER, Instant.parse("2026-11-02T10:15:30Z"), "python", new Resources(1, 512, 256, 1024),
                Map.of(), Map.of(), LifecyclePolicy.DEFAULT, new NetworkPolicy(EgressPolicy.DENY_ALL), List.of(layer),
                Optional.empty(), 4096, 2048, List.of());
    }
}
