package io.stasis.catalog.sqlite;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.NetworkPolicy;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A {@link NetworkPolicy} as the JSON object in the {@code policy} column, in the API's shape:
 * {@code {"egress":{"default":"deny","allow":["example.com","10.0.0.0/8"],"deny":[]}}}.
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
        return node.toString();
    }

    static NetworkPolicy fromJson(String text) {
        try {
            JsonNode egress = JSON.readTree(text).required("egress");
            var action = EgressPolicy.Action.valueOf(egress.required("default").asText().toUpperCase(Locale.ROOT));
            return new NetworkPolicy(new EgressPolicy(action, rules(egress.required("allow")), rules(egress.required("deny"))));
        } catch (JsonProcessingException | IllegalArgumentException e) {
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
