package io.stasis.catalog.sqlite;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.HeaderRule;
import io.stasis.core.network.NetworkPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;

/**
 * A {@link NetworkPolicy} as the JSON object in the {@code policy} column, in the API's shape:
 * {@code {"egress":{"default":"deny","allow":["example.com","10.0.0.0/8"],"deny":[]},
 * "rules":[{"domain":"api.example.com","headers":{"Authorization":"Bearer {{secret:TOKEN}}"}}]}}.
 * Rows written before header rules existed have no {@code rules}: read as none.
 */
final class NetworkJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private NetworkJson() {
    }

    static String toJson(NetworkPolicy policy) {
        ObjectNode node = JSON.createObjectNode();
        ObjectNode egress = node.putObject("egress");
        egress.put("default", policy.egress().defaultAction().wireName());
        rules(egress.putArray("allow"), policy.egress().allow());
        rules(egress.putArray("deny"), policy.egress().deny());
        ArrayNode headerRules = node.putArray("rules");
        for (HeaderRule rule : policy.rules()) {
            ObjectNode r = headerRules.addObject();
            r.put("domain", rule.domain().pattern());
            ObjectNode headers = r.putObject("headers");
            rule.headers().forEach((name, value) -> headers.put(name, value.text()));
        }
        return node.toString();
    }

    static NetworkPolicy fromJson(String text) {
        try {
            JsonNode root = JSON.readTree(text);
            JsonNode egress = root.required("egress");
            var action = EgressPolicy.Action.valueOf(egress.required("default").asText().toUpperCase(Locale.ROOT));
            var headerRules = new ArrayList<HeaderRule>();
            JsonNode stored = root.path("rules");
            for (int i = 0; i < stored.size(); i++) {
                var headers = new LinkedHashMap<String, String>();
                stored.get(i).required("headers").properties().forEach(e -> headers.put(e.getKey(), e.getValue().asText()));
                headerRules.add(HeaderRule.of(stored.get(i).required("domain").asText(), headers, "rules[" + i + "]"));
            }
            return new NetworkPolicy(new EgressPolicy(action, rules(egress.required("allow")), rules(egress.required("deny"))), headerRules);
        } catch (JsonProcessingException | IllegalArgumentException | StasisException e) {
            throw new IllegalStateException("unreadable network policy in the catalog: " + text, e);
        }
    }

    private static void rules(ArrayNode array, List<EgressRule> rules) {
        rules.forEach(r -> array.add(r.toString()));
    }

    private static List<EgressRule> rules(JsonNode array) {
        var out = new ArrayList<EgressRule>();
        array.forEach(n -> out.add(EgressRule.parse(n.asText(), "policy")));
        return out;
    }
}
