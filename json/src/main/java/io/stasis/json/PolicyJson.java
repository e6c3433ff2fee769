package io.stasis.json;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.HeaderRule;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.Durations;
import io.stasis.core.policy.IdlePolicy;
import io.stasis.core.policy.LifecyclePolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The JSON shapes of a sandbox's lifecycle and network policies, as the API takes and shows them,
 * as a checkpoint descriptor keeps them (so a descriptor reads like a create) and, for the network
 * policy, as the catalog stores it: their one reader and writer. Reading a request checks every
 * field and names the wrong one ({@code invalid_request}). The descriptor's golden files and the
 * catalog's pin what it writes, so a change here that would change the API's shape
 * also fails them, and needs a new descriptor version. Ordered maps throughout: {@code Map.of}
 * iterates in an order that changes from one JVM run to the next.
 */
public final class PolicyJson {
    private static final Set<String> NETWORK_FIELDS = Set.of("egress", "rules");
    private static final Set<String> RULE_FIELDS = Set.of("domain", "headers");
    private static final Set<String> EGRESS_FIELDS = Set.of("default", "allow", "deny");
    /** Entries in an egress allow or deny list. */
    private static final int MAX_EGRESS_ENTRIES = 1000;
    /** Each durability checkpoint dumps the sandbox's memory: no more often than this. */
    private static final Duration MIN_CHECKPOINT_EVERY = Duration.ofSeconds(5);
    private static final Set<String> LIFECYCLE_FIELDS = Set.of("pauseAfterIdle", "standbyAfterIdle", "hibernateAfterIdle", "stopAfterIdle", "deleteAfterIdle",
            "maxAge", "atMaxAge", "wakeFor", "autoResume");

    private PolicyJson() {
    }

    /** Durations as strings ({@code "15s"}), {@code null} for never. */
    public static Map<String, Object> lifecycle(LifecyclePolicy policy) {
        var out = new LinkedHashMap<String, Object>();
        out.put("pauseAfterIdle", policy.pauseAfterIdle().map(Durations::format).orElse(null));
        out.put("standbyAfterIdle", policy.standbyAfterIdle().map(Durations::format).orElse(null));
        out.put("hibernateAfterIdle", policy.hibernateAfterIdle().map(Durations::format).orElse(null));
        out.put("stopAfterIdle", policy.stopAfterIdle().map(Durations::format).orElse(null));
        out.put("deleteAfterIdle", policy.deleteAfterIdle().map(Durations::format).orElse(null));
        out.put("maxAge", policy.maxAge().map(Durations::format).orElse(null));
        out.put("atMaxAge", policy.atMaxAge().wireName());
        out.put("wakeFor", policy.wakeFor().map(Durations::format).orElse(null));
        out.put("autoResume", policy.autoResume());
        return out;
    }

    /** {@code {"egress": {...}, "rules": [...]}}: what {@link #readNetwork} reads back. */
    public static Map<String, Object> network(NetworkPolicy policy) {
        var out = new LinkedHashMap<String, Object>();
        out.put("egress", egress(policy.egress()));
        out.put("rules", headerRules(policy.rules()));
        return out;
    }

    /** {@code {"default": "deny", "allow": [...], "deny": [...]}}, entries being domains and CIDR networks. */
    public static Map<String, Object> egress(EgressPolicy egress) {
        var out = new LinkedHashMap<String, Object>();
        out.put("default", egress.defaultAction().wireName());
        out.put("allow", egress.allow().stream().map(Object::toString).toList());
        out.put("deny", egress.deny().stream().map(Object::toString).toList());
        return out;
    }

    /** {@code [{"domain": "api.example.com", "headers": {"Authorization": "Bearer {{secret:NAME}}"}}]} */
    public static List<Map<String, Object>> headerRules(List<HeaderRule> rules) {
        var out = new ArrayList<Map<String, Object>>();
        for (var rule : rules) {
            var headers = new LinkedHashMap<String, String>();
            rule.headers().forEach((name, value) -> headers.put(name, value.text()));
            var view = new LinkedHashMap<String, Object>();
            view.put("domain", rule.domain().pattern());
            view.put("headers", headers);
            out.add(view);
        }
        return out;
    }

    public static LifecyclePolicy mergeLifecycle(LifecyclePolicy base, JsonNode changes) {
        if (changes == null || changes.isNull()) return base;
        if (!changes.isObject()) throw StasisException.invalid("lifecycle", "must be an object");
        changes.fieldNames().forEachRemaining(f -> {
            if (!LIFECYCLE_FIELDS.contains(f)) throw StasisException.invalid("lifecycle." + f, "unknown field; known: " + String.join(", ", LIFECYCLE_FIELDS.stream().sorted().toList()));
        });
        boolean autoResume = base.autoResume();
        if (changes.has("autoResume")) {
            if (!changes.get("autoResume").isBoolean()) throw StasisException.invalid("lifecycle.autoResume", "must be true or false");
            autoResume = changes.get("autoResume").booleanValue();
        }
        var atMaxAge = base.atMaxAge();
        if (changes.has("atMaxAge")) {
            JsonNode value = changes.get("atMaxAge");
            atMaxAge = (value.isTextual() ? IdlePolicy.Action.byWireName(value.textValue()) : Optional.<IdlePolicy.Action>empty())
                    .orElseThrow(() -> StasisException.invalid("lifecycle.atMaxAge", "must be one of delete, stop, hibernate, standby, pause"));
        }
        return new LifecyclePolicy(
                duration(changes, "pauseAfterIdle", base.pauseAfterIdle()),
                duration(changes, "standbyAfterIdle", base.standbyAfterIdle()),
                duration(changes, "hibernateAfterIdle", base.hibernateAfterIdle()),
                duration(changes, "stopAfterIdle", base.stopAfterIdle()),
                duration(changes, "deleteAfterIdle", base.deleteAfterIdle()),
                duration(changes, "maxAge", base.maxAge()),
                autoResume,
                base.checkpointEvery(),
                atMaxAge,
                duration(changes, "wakeFor", base.wakeFor()));
    }

    /** {@code {"checkpointEvery": "5m"}}, {@code null} for never: the durability part of a lifecycle policy. */
    public static Map<String, Object> durability(LifecyclePolicy policy) {
        var out = new LinkedHashMap<String, Object>();
        out.put("checkpointEvery", policy.checkpointEvery().map(Durations::format).orElse(null));
        return out;
    }

    /** The policy with what a create's {@code durability} object changes. */
    public static LifecyclePolicy mergeDurability(LifecyclePolicy base, JsonNode changes) {
        if (changes == null || changes.isNull()) return base;
        if (!changes.isObject()) throw StasisException.invalid("durability", "must be an object");
        changes.fieldNames().forEachRemaining(f -> {
            if (!f.equals("checkpointEvery")) throw StasisException.invalid("durability." + f, "unknown field; known: checkpointEvery");
        });
        if (!changes.has("checkpointEvery")) return base;
        JsonNode value = changes.get("checkpointEvery");
        if (value.isNull()) return base.withCheckpointEvery(Optional.empty());
        if (!value.isTextual()) throw StasisException.invalid("durability.checkpointEvery", "must be a duration string such as \"5m\", or null");
        var period = Durations.parse("durability.checkpointEvery", value.textValue());
        if (period.compareTo(MIN_CHECKPOINT_EVERY) < 0)
            throw StasisException.invalid("durability.checkpointEvery", "must be at least " + Durations.format(MIN_CHECKPOINT_EVERY));
        return base.withCheckpointEvery(Optional.of(period));
    }

    private static Optional<Duration> duration(JsonNode changes, String field, Optional<Duration> base) {
        if (!changes.has(field)) return base;
        JsonNode value = changes.get(field);
        if (value.isNull()) return Optional.empty();
        if (!value.isTextual()) throw StasisException.invalid("lifecycle." + field, "must be a duration string such as \"15s\", or null");
        return Optional.of(Durations.parse("lifecycle." + field, value.textValue()));
    }

    /**
     * A network policy a request gives ({@code field} names it in errors): every field checked,
     * unknown ones refused, networks IPv4 only; {@code invalid_request} naming what is wrong.
     */
    public static NetworkPolicy readNetwork(JsonNode node, String field) {
        return readNetwork(node, field, true);
    }

    /**
     * A network policy Stasis stored ({@link #network}): read as written, every part of
     * {@code egress} required, without the checks for what a request may ask (an operator's
     * default policy is not held to them, and a row of an older or newer version keeps its meaning).
     */
    public static NetworkPolicy readStoredNetwork(JsonNode node) {
        return readNetwork(node, "network", false);
    }

    private static NetworkPolicy readNetwork(JsonNode node, String field, boolean request) {
        if (node == null || !node.isObject()) throw StasisException.invalid(field, "must be an object such as {\"egress\": {\"default\": \"deny\", \"allow\": [\"example.com\"]}}");
        if (request) unknownFields(node, NETWORK_FIELDS, field);
        var headerRules = headerRules(node.get("rules"), field + ".rules", request);
        JsonNode egress = node.get("egress");
        if (!request && (egress == null || !egress.has("default") || !egress.has("allow") || !egress.has("deny")))
            throw StasisException.invalid(field + ".egress", "a stored policy has egress with default, allow and deny");
        if (egress == null || egress.isNull()) return new NetworkPolicy(EgressPolicy.DENY_ALL, headerRules);
        if (!egress.isObject()) throw StasisException.invalid(field + ".egress", "must be an object");
        if (request) unknownFields(egress, EGRESS_FIELDS, field + ".egress");
        var action = EgressPolicy.Action.DENY;
        if (egress.has("default")) {
            String value = egress.get("default").asText("");
            action = switch (value) {
                case "allow" -> EgressPolicy.Action.ALLOW;
                case "deny" -> EgressPolicy.Action.DENY;
                default -> throw StasisException.invalid(field + ".egress.default", "must be \"allow\" or \"deny\"");
            };
        }
        return new NetworkPolicy(new EgressPolicy(action, rules(egress.get("allow"), field + ".egress.allow", request),
                rules(egress.get("deny"), field + ".egress.deny", request)), headerRules);
    }

    /** {@code [{"domain": "api.example.com", "headers": {"Authorization": "Bearer {{secret:NAME}}"}}]} */
    private static List<HeaderRule> headerRules(JsonNode array, String field, boolean request) {
        if (array == null || array.isNull()) return List.of();
        if (!array.isArray()) throw StasisException.invalid(field, "must be an array of {\"domain\": ..., \"headers\": {...}}");
        if (request && array.size() > NetworkPolicy.MAX_RULES) throw StasisException.invalid(field, "holds more than " + NetworkPolicy.MAX_RULES + " rules");
        var out = new ArrayList<HeaderRule>();
        for (int i = 0; i < array.size(); i++) {
            String f = field + "[" + i + "]";
            JsonNode item = array.get(i);
            if (!item.isObject()) throw StasisException.invalid(f, "must be an object");
            if (request) unknownFields(item, RULE_FIELDS, f);
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

    private static List<EgressRule> rules(JsonNode array, String field, boolean request) {
        if (array == null || array.isNull()) return List.of();
        if (!array.isArray()) throw StasisException.invalid(field, "must be an array of domains and CIDR networks");
        if (request && array.size() > MAX_EGRESS_ENTRIES) throw StasisException.invalid(field, "holds more than " + MAX_EGRESS_ENTRIES + " entries");
        var out = new ArrayList<EgressRule>();
        for (int i = 0; i < array.size(); i++) {
            JsonNode item = array.get(i);
            if (!item.isTextual()) throw StasisException.invalid(field + "[" + i + "]", "must be a string");
            var rule = EgressRule.parse(item.textValue(), field + "[" + i + "]");
            if (request && rule instanceof EgressRule.Network n && !n.cidr().isIpv4())
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
}
