package io.stasis.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.blob.content.archive.PolicyJson;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.HeaderRule;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.network.NetworkService;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code network} object of the API: {@code {"egress": {"default": "deny", "allow": [...],
 * "deny": [...]}}}, entries being domains ({@code example.com}, {@code *.example.com}) or IPv4
 * addresses and CIDR networks. A request gives the whole policy; {@code default} is {@code deny}
 * and the lists are empty when left out. {@code rules}: headers the egress proxy sets on HTTPS
 * requests to some allowed domains, values naming secrets ({@code {{secret:NAME}}}). The policy's
 * writer, shared with the checkpoint descriptor, is {@link PolicyJson}.
 */
final class NetworkJson {
    private static final Set<String> FIELDS = Set.of("egress", "rules");
    private static final Set<String> RULE_FIELDS = Set.of("domain", "headers");
    private static final Set<String> EGRESS_FIELDS = Set.of("default", "allow", "deny");
    private static final int MAX_RULES = 1000;

    private NetworkJson() {
    }

    static NetworkPolicy parse(JsonNode node, String field) {
        if (node == null || !node.isObject()) throw StasisException.invalid(field, "must be an object such as {\"egress\": {\"default\": \"deny\", \"allow\": [\"example.com\"]}}");
        unknownFields(node, FIELDS, field);
        var headerRules = headerRules(node.get("rules"), field + ".rules");
        JsonNode egress = node.get("egress");
        if (egress == null || egress.isNull()) return new NetworkPolicy(EgressPolicy.DENY_ALL, headerRules);
        if (!egress.isObject()) throw StasisException.invalid(field + ".egress", "must be an object");
        unknownFields(egress, EGRESS_FIELDS, field + ".egress");
        var action = EgressPolicy.Action.DENY;
        if (egress.has("default")) {
            String value = egress.get("default").asText("");
            action = switch (value) {
                case "allow" -> EgressPolicy.Action.ALLOW;
                case "deny" -> EgressPolicy.Action.DENY;
                default -> throw StasisException.invalid(field + ".egress.default", "must be \"allow\" or \"deny\"");
            };
        }
        return new NetworkPolicy(new EgressPolicy(action, rules(egress.get("allow"), field + ".egress.allow"),
                rules(egress.get("deny"), field + ".egress.deny")), headerRules);
    }

    /** {@code [{"domain": "api.example.com", "headers": {"Authorization": "Bearer {{secret:NAME}}"}}]} */
    private static List<HeaderRule> headerRules(JsonNode array, String field) {
        if (array == null || array.isNull()) return List.of();
        if (!array.isArray()) throw StasisException.invalid(field, "must be an array of {\"domain\": ..., \"headers\": {...}}");
        if (array.size() > NetworkPolicy.MAX_RULES) throw StasisException.invalid(field, "holds more than " + NetworkPolicy.MAX_RULES + " rules");
        var out = new ArrayList<HeaderRule>();
        for (int i = 0; i < array.size(); i++) {
            String f = field + "[" + i + "]";
            JsonNode item = array.get(i);
            if (!item.isObject()) throw StasisException.invalid(f, "must be an object");
            unknownFields(item, RULE_FIELDS, f);
            if (!item.path("domain").isTextual()) throw StasisException.invalid(f + ".domain", "is required: a domain (api.example.com, *.example.com)");
            JsonNode headers = item.get("headers");
            if (headers == null || !headers.isObject()) throw StasisException.invalid(f + ".headers", "must be an object of header names to values");
            var values = new LinkedHashMap<String, String>();
            for (var e : headers.properties()) {
                if (!e.getValue().isTextual()) throw StasisException.invalid(f + ".headers." + e.getKey(), "must be a string");
                values.put(e.getKey(), e.getValue().textValue());
            }
            out.add(HeaderRule.of(item.get("domain").textValue(), values, f));
        }
        return out;
    }

    private static List<EgressRule> rules(JsonNode array, String field) {
        if (array == null || array.isNull()) return List.of();
        if (!array.isArray()) throw StasisException.invalid(field, "must be an array of domains and CIDR networks");
        if (array.size() > MAX_RULES) throw StasisException.invalid(field, "holds more than " + MAX_RULES + " entries");
        var out = new ArrayList<EgressRule>();
        for (int i = 0; i < array.size(); i++) {
            JsonNode item = array.get(i);
            if (!item.isTextual()) throw StasisException.invalid(field + "[" + i + "]", "must be a string");
            var rule = EgressRule.parse(item.textValue(), field + "[" + i + "]");
            if (rule instanceof EgressRule.Network n && !n.cidr().isIpv4())
                throw StasisException.invalid(field + "[" + i + "]", "IPv6 is off inside sandboxes; give IPv4 networks");
            out.add(rule);
        }
        return out;
    }

    private static void unknownFields(JsonNode node, Set<String> known, String field) {
        node.fieldNames().forEachRemaining(f -> {
            if (!known.contains(f)) throw StasisException.invalid(field + "." + f, "unknown field; known: " + String.join(", ", known.stream().sorted().toList()));
        });
    }

    static Map<String, Object> view(String sandboxId, NetworkService.View view) {
        var out = new LinkedHashMap<String, Object>();
        out.put("sandboxId", sandboxId);
        out.put("enabled", view.enabled());
        out.put("address", view.address().map(InetAddress::getHostAddress).orElse(null));
        out.put("gateway", view.gateway().map(InetAddress::getHostAddress).orElse(null));
        out.put("dns", view.gateway().map(InetAddress::getHostAddress).orElse(null));
        out.put("egress", PolicyJson.egress(view.policy().egress()));
        out.put("rules", PolicyJson.headerRules(view.policy().rules()));
        out.put("deniedConnections", view.deniedConnections());
        return out;
    }
}
