package io.stasis.audit.jsonl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.audit.AuditEntry;
import io.stasis.core.sandbox.SandboxId;
import io.stasis.core.tenant.TenantId;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Optional;

/** The one codec of an audit line: an {@link AuditEntry} as a JSON object on one line, absent fields left out. */
final class AuditCodec {
    private static final ObjectMapper JSON = new ObjectMapper();

    private AuditCodec() {
    }

    /** The entry's line, newline included. */
    static byte[] encode(AuditEntry entry) {
        ObjectNode node = JSON.createObjectNode();
        node.put("at", entry.at().toString());
        node.put("kind", entry.kind());
        entry.tenant().ifPresent(t -> node.put("tenant", t.value()));
        switch (entry) {
            case AuditEntry.Call call -> {
                call.credentialId().ifPresent(c -> node.put("credentialId", c));
                if (call.root()) node.put("root", true);
                node.put("method", call.method());
                node.put("route", call.route());
                node.put("path", call.path());
                call.resource().ifPresent(r -> node.put("resource", r));
                node.put("status", call.status());
                node.put("outcome", call.outcome());
                node.put("requestId", call.requestId());
            }
            case AuditEntry.Egress egress -> {
                node.put("sandbox", egress.sandbox().value());
                node.put("decision", egress.allowed() ? "allowed" : "denied");
                egress.domain().ifPresent(d -> node.put("domain", d));
                egress.address().ifPresent(a -> node.put("address", a));
                node.put("port", egress.port());
                node.put("protocol", egress.protocol());
                node.put("rule", egress.rule());
            }
        }
        return (node + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** The entry of a line; empty for a line that is not one (a write cut short by a crash). */
    static Optional<AuditEntry> decode(String line) {
        try {
            JsonNode n = JSON.readTree(line);
            if (n == null || !n.isObject()) return Optional.empty();
            Instant at = Instant.parse(n.path("at").asText());
            Optional<TenantId> tenant = text(n, "tenant").map(TenantId::new);
            return switch (n.path("kind").asText()) {
                case "call" -> Optional.of(new AuditEntry.Call(at, tenant, text(n, "credentialId"), n.path("root").asBoolean(false),
                        n.path("method").asText(), n.path("route").asText(), n.path("path").asText(), text(n, "resource"),
                        n.path("status").asInt(), n.path("outcome").asText(), n.path("requestId").asText()));
                case "egress" -> Optional.of(new AuditEntry.Egress(at, tenant, new SandboxId(n.path("sandbox").asText()),
                        n.path("decision").asText().equals("allowed"), text(n, "domain"), text(n, "address"), n.path("port").asInt(),
                        n.path("protocol").asText(), n.path("rule").asText()));
                default -> Optional.empty();
            };
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Optional<String> text(JsonNode node, String field) {
        var value = node.get(field);
        return value == null || value.isNull() ? Optional.empty() : Optional.of(value.asText());
    }
}
