package io.stasis.blob.content.archive;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.HeaderRule;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.Durations;
import io.stasis.core.policy.LifecyclePolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Reads a descriptor's {@code sandbox.lifecycle} and {@code sandbox.network}, the shapes
 * {@link PolicyJson} writes. Checked as strictly as a create checks them (unknown fields, types,
 * limits, IPv4 only), with the same errors naming the field, so that a damaged descriptor is
 * refused rather than restored with other settings. A field left out reads as a create would read
 * it: the default lifecycle's value, no rules, egress denied.
 */
final class DescriptorPolicies {
    private static final Set<String> LIFECYCLE_FIELDS = Set.of("pauseAfterIdle", "standbyAfterIdle", "hibernateAfterIdle", "stopAfterIdle",
            "deleteAfterIdle", "maxAge", "autoResume");
    private static final Set<String> NETWORK_FIELDS = Set.of("egress", "rules");
    private static final Set<String> EGRESS_FIELDS = Set.of("default", "allow", "deny");
    private static final Set<String> RULE_FIELDS = Set.of("domain", "headers");
    /** As many entries as a create accepts in each of {@code allow} and {@code deny}. */
    private static final int MAX_EGRESS_ENTRIES = 1000;

    private DescriptorPolicies() {
    }

    static LifecyclePolicy lifecycle(JsonNode node) {
        var base = LifecyclePolicy.DEFAULT;
        if (node == null || node.isNull()) return base;
        if (!node.isObject()) throw StasisException.invalid("lifecycle", "must be an object");
        onlyKnownFields(node, LIFECYCLE_FIELDS, "lifecycle");
        boolean autoResume = base.autoResume();
        if (node.has("autoResume")) {
            if (!node.get("autoResume").isBoolean()) throw StasisException.invalid("lifecycle.autoResume", "must be true or false");
            autoResume = node.get("autoResume").booleanValue();
        }
        return new LifecyclePolicy(duration(node, "pauseAfterIdle", base.pauseAfterIdle()),
                duration(node, "standbyAfterIdle", base.standbyAfterIdle()), duration(node, "hibernateAfterIdle", base.hibernateAfterIdle()),
                duration(node, "stopAfterIdle", base.stopAfterIdle()), duration(node, "deleteAfterIdle", base.deleteAfterIdle()),
                duration(node, "maxAge", base.maxAge()), autoResume);
    }

    private static Optional<Duration> duration(JsonNode lifecycle, String field, Optional<Duration> base) {
        if (!lifecycle.has(field)) return base;
        JsonNode value = lifecycle.get(field);
        if (value.isNull()) return Optional.empty();
        if (!value.isTextual()) throw StasisException.invalid("lifecycle." + field, "must be a duration string such as \"15s\", or null");
        return Optional.of(Durations.parse("lifecycle." + field, value.textValue()));
    }

    static NetworkPolicy network(JsonNode node) {
        if (node == null || !node.isObject())
            throw StasisException.invalid("network", "must be an object such as {\"egress\": {\"default\": \"deny\", \"allow\": [\"example.com\"]}}");
        onlyKnownFields(node, NETWORK_FIELDS, "network");
        var rules = headerRules(node.get("rules"));
        JsonNode egress = node.get("egress");
        if (egress == null || egress.isNull()) return new NetworkPolicy(EgressPolicy.DENY_ALL, rules);
        if (!egress.isObject()) throw StasisException.invalid("network.egress", "must be an object");
        onlyKnownFields(egress, EGRESS_FIELDS, "network.egress");
        var action = EgressPolicy.Action.DENY;
        if (egress.has("default")) {
            action = switch (egress.get("default").asText("")) {
                case "allow" -> EgressPolicy.Action.ALLOW;
                case "deny" -> EgressPolicy.Action.DENY;
                default -> throw StasisException.invalid("network.egress.default", "must be \"allow\" or \"deny\"");
            };
        }
        return new NetworkPolicy(new EgressPolicy(action, egressEntries(egress.get("allow"), "network.egress.allow"),
                egressEntries(egress.get("deny"), "network.egress.deny")), rules);
    }

    private static List<HeaderRule> headerRules(JsonNode array) {
        String field = "network.rules";
        if (array == null || array.isNull()) return List.of();
        if (!array.isArray()) throw StasisException.invalid(field, "must be an array of {\"domain\": ..., \"headers\": {...}}");
        if (array.size() > NetworkPolicy.MAX_RULES) throw StasisException.invalid(field, "holds more than " + NetworkPolicy.MAX_RULES + " rules");
        var out = new ArrayList<HeaderRule>();
        for (int i = 0; i < array.size(); i++) {
            String at = field + "[" + i + "]";
            JsonNode rule = array.get(i);
            if (!rule.isObject()) throw StasisException.invalid(at, "must be an object");
            onlyKnownFields(rule, RULE_FIELDS, at);
            if (!rule.path("domain").isTextual()) throw StasisException.invalid(at + ".domain", "is required: a domain (api.example.com, *.example.com)");
            JsonNode headers = rule.get("headers");
            if (headers == null || !headers.isObject()) throw StasisException.invalid(at + ".headers", "must be an object of header names to values");
            var values = new LinkedHashMap<String, String>();
            for (var header : headers.properties()) {
                if (!header.getValue().isTextual()) throw StasisException.invalid(at + ".headers." + header.getKey(), "must be a string");
                values.put(header.getKey(), header.getValue().textValue());
            }
            out.add(HeaderRule.of(rule.get("domain").textValue(), values, at));
        }
        return out;
    }

    private static List<EgressRule> egressEntries(JsonNode array, String field) {
        if (array == null || array.isNull()) return List.of();
        if (!array.isArray()) throw StasisException.invalid(field, "must be an array of domains and CIDR networks");
        if (array.size() > MAX_EGRESS_ENTRIES) throw StasisException.invalid(field, "holds more than " + MAX_EGRESS_ENTRIES + " entries");
        var out = new ArrayList<EgressRule>();
        for (int i = 0; i < array.size(); i++) {
            String at = field + "[" + i + "]";
            JsonNode entry = array.get(i);
            if (!entry.isTextual()) throw StasisException.invalid(at, "must be a string");
            var rule = EgressRule.parse(entry.textValue(), at);
            if (rule instanceof EgressRule.Network n && !n.cidr().isIpv4())
                throw StasisException.invalid(at, "IPv6 is off inside sandboxes; give IPv4 networks");
            out.add(rule);
        }
        return out;
    }

    private static void onlyKnownFields(JsonNode node, Set<String> known, String field) {
        node.fieldNames().forEachRemaining(f -> {
            if (!known.contains(f)) throw StasisException.invalid(field + "." + f, "unknown field; known: " + String.join(", ", known.stream().sorted().toList()));
        });
    }
}
