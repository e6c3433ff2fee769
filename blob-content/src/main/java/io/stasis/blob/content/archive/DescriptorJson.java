package io.stasis.blob.content.archive;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.stasis.core.blob.ManifestId;
import io.stasis.core.bucket.SandboxBucket;
import io.stasis.core.checkpoint.Checkpoint;
import io.stasis.core.checkpoint.CheckpointDescriptor;
import io.stasis.core.checkpoint.CheckpointId;
import io.stasis.core.policy.LifecyclePolicy;
import io.stasis.core.sandbox.Resources;
import io.stasis.core.sandbox.RuntimeKind;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import io.stasis.json.PolicyJson;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The JSON of a checkpoint descriptor in the blob store (versions 1 to 4, see
 * {@link CheckpointDescriptor#VERSION}; golden files in the tests pin both). The sandbox's settings use
 * the API's own shapes (lifecycle and network as in a create, written by {@link PolicyJson}; bucket
 * mounts as the API shows them), so a descriptor reads like one.
 */
public final class DescriptorJson {
    /** Plain JSON; trailing text after the object is refused, as the API refuses it in a body. */
    private static final ObjectMapper MAPPER = JsonMapper.builder().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).build();

    private DescriptorJson() {
    }

    public static byte[] encode(CheckpointDescriptor d) {
        var out = new LinkedHashMap<String, Object>();
        out.put("version", d.formatVersion());
        out.put("checkpointId", d.checkpoint().value());
        out.put("tenant", d.tenant().value());
        out.put("sandboxId", d.sandbox().value());
        out.put("name", d.name().orElse(null));
        out.put("memory", d.memory());
        out.put("purpose", d.purpose().wireName());
        out.put("createdAt", d.createdAt().toString());
        var sandbox = new LinkedHashMap<String, Object>();
        sandbox.put("template", d.template());
        var r = d.resources();
        // Ordered maps throughout: Map.of iterates in an order that changes from one JVM run to the next.
        var resources = new LinkedHashMap<String, Object>();
        resources.put("cpus", r.cpus());
        resources.put("memoryMb", r.memoryMb());
        resources.put("pids", r.pids());
        resources.put("diskMb", r.diskMb());
        sandbox.put("resources", resources);
        sandbox.put("env", d.env());
        sandbox.put("metadata", d.metadata());
        var lifecycle = PolicyJson.lifecycle(d.lifecycle());
        if (d.formatVersion() < 4) {
            lifecycle.remove("atMaxAge"); // version 4's: an age limit that deletes is what older readers know
            lifecycle.remove("wakeFor");
        }
        sandbox.put("lifecycle", lifecycle);
        sandbox.put("network", PolicyJson.network(d.network()));
        if (!d.buckets().isEmpty()) sandbox.put("mounts", d.buckets().stream().map(DescriptorJson::bucket).toList());
        if (d.runtime() != RuntimeKind.RUNC) sandbox.put("runtime", d.runtime().wireName());
        out.put("sandbox", sandbox);
        var roots = new ArrayList<Map<String, Object>>();
        for (var layer : d.roots()) {
            var l = new LinkedHashMap<String, Object>();
            l.put("checkpointId", layer.checkpoint().value());
            l.put("parentId", layer.parent().map(CheckpointId::value).orElse(null));
            l.put("manifest", layer.stream().hex());
            l.put("bytes", layer.bytes());
            roots.add(l);
        }
        out.put("roots", roots);
        out.put("image", d.image().map(ManifestId::hex).orElse(null));
        out.put("logicalBytes", d.logicalBytes());
        out.put("storedBytes", d.storedBytes());
        try {
            return MAPPER.writeValueAsString(out).getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise the descriptor of " + d.checkpoint(), e);
        }
    }

    public static CheckpointDescriptor decode(byte[] bytes) throws IOException {
        JsonNode n = MAPPER.readTree(bytes);
        int version = n.path("version").asInt(0);
        if (version < 1 || version > CheckpointDescriptor.VERSION)
            throw new IOException("descriptor version " + version + " is not readable by this version (knows up to " + CheckpointDescriptor.VERSION + ")");
        JsonNode s = n.path("sandbox");
        JsonNode r = s.path("resources");
        var roots = new ArrayList<CheckpointDescriptor.RootLayer>();
        for (JsonNode l : n.path("roots"))
            roots.add(new CheckpointDescriptor.RootLayer(new CheckpointId(l.path("checkpointId").asText()),
                    text(l, "parentId").map(CheckpointId::new), ManifestId.parse(l.path("manifest").asText()), l.path("bytes").asLong()));
        return new CheckpointDescriptor(new CheckpointId(n.path("checkpointId").asText()), new TenantId(n.path("tenant").asText()),
                new SandboxId(n.path("sandboxId").asText()), text(n, "name"), n.path("memory").asBoolean(), purpose(n.path("purpose").asText()),
                Instant.parse(n.path("createdAt").asText()), s.path("template").asText(),
                new Resources(r.path("cpus").asDouble(), r.path("memoryMb").asInt(), r.path("pids").asInt(), r.path("diskMb").asInt()),
                strings(s.path("env")), strings(s.path("metadata")),
                PolicyJson.mergeLifecycle(LifecyclePolicy.DEFAULT, s.path("lifecycle")), PolicyJson.readStoredNetwork(s.path("network")),
                roots, text(n, "image").map(ManifestId::parse), n.path("logicalBytes").asLong(), n.path("storedBytes").asLong(),
                buckets(s.path("mounts")), s.has("runtime") ? RuntimeKind.parse("runtime", s.path("runtime").asText()) : RuntimeKind.RUNC);
    }

    /** A bucket mount in the API's shape (version 2): the secret's name, never its value. */
    private static Map<String, Object> bucket(SandboxBucket b) {
        var out = new LinkedHashMap<String, Object>();
        out.put("type", SandboxBucket.TYPE_S3);
        out.put("endpoint", b.endpoint().toString());
        out.put("region", b.region());
        out.put("bucket", b.bucket());
        out.put("prefix", b.prefix());
        out.put("path", b.path());
        out.put("readOnly", b.readOnly());
        out.put("credentialsSecret", b.credentialsSecret());
        return out;
    }

    /** Bucket mounts in the API's shape (version 2). */
    private static List<SandboxBucket> buckets(JsonNode mounts) {
        var out = new ArrayList<SandboxBucket>();
        for (JsonNode m : mounts)
            out.add(new SandboxBucket(m.path("path").asText(), URI.create(m.path("endpoint").asText()),
                    m.path("region").asText(), m.path("bucket").asText(), m.path("prefix").asText(), m.path("readOnly").asBoolean(),
                    m.path("credentialsSecret").asText()));
        return out;
    }

    private static Optional<String> text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? Optional.empty() : Optional.of(v.asText());
    }

    private static Map<String, String> strings(JsonNode n) {
        var out = new LinkedHashMap<String, String>();
        n.properties().forEach(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    private static Checkpoint.Purpose purpose(String wire) {
        for (var p : Checkpoint.Purpose.values()) if (p.wireName().equals(wire)) return p;
        throw new IllegalArgumentException("unknown checkpoint purpose '" + wire + "'");
    }
}
