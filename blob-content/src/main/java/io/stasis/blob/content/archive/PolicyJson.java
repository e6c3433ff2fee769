package io.stasis.blob.content.archive;

import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.HeaderRule;
import io.stasis.core.policy.Durations;
import io.stasis.core.policy.LifecyclePolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON shapes of a sandbox's lifecycle and network policies, as the API shows them and as a
 * checkpoint descriptor keeps them (so a descriptor reads like a create): their one writer. The
 * descriptor's golden files pin what it writes, so a change here that would change the API's shape
 * also fails them, and needs a new descriptor version. Ordered maps throughout: {@code Map.of}
 * iterates in an order that changes from one JVM run to the next.
 */
public final class PolicyJson {
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
        out.put("autoResume", policy.autoResume());
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
}
