package io.stasis.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.e2b.E2bErrors.E2bException;
import io.stasis.sdk.HeaderRule;
import io.stasis.sdk.NetworkPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;

/**
 * E2B's network settings as Stasis's egress policy, enforced outside the sandbox: no internet
 * ({@code allow_internet_access: false}) is a policy that denies everything; {@code denyOut}
 * naming all traffic ({@code 0.0.0.0/0}) makes deny the default with {@code allowOut} as its
 * exceptions; otherwise the default is allow and {@code denyOut} lists what is refused. Header
 * transforms ({@code rules: {domain: [{transform: {headers}}]}}) become Stasis's header rules,
 * added to the sandbox's HTTPS requests to that domain.
 */
final class E2bNetwork {
    private static final String ALL_TRAFFIC = "0.0.0.0/0";

    private E2bNetwork() {
    }

    /** The policy of a create's {@code NewSandbox}, or empty for the server's default. */
    static Optional<NetworkPolicy> of(JsonNode body) {
        boolean noInternet = body.has("allow_internet_access") && !body.path("allow_internet_access").asBoolean(true);
        var network = body.path("network");
        if (!noInternet && (network.isMissingNode() || network.isNull())) return Optional.empty();
        return Optional.of(policy(network, noInternet));
    }

    /** The whole policy of a network update (fields left out are cleared, as in E2B). */
    static NetworkPolicy update(JsonNode body) {
        return policy(body, body.has("allow_internet_access") && !body.path("allow_internet_access").asBoolean(true));
    }

    private static NetworkPolicy policy(JsonNode network, boolean noInternet) {
        List<String> allow = strings(network.path("allowOut"), "allowOut");
        List<String> deny = strings(network.path("denyOut"), "denyOut");
        var builder = NetworkPolicy.builder();
        if (noInternet || deny.contains(ALL_TRAFFIC)) {
            builder.denyByDefault();
            deny.remove(ALL_TRAFFIC);
        } else {
            builder.allowByDefault();
        }
        if (!noInternet) builder.allow(allow);
        builder.deny(deny);
        var rules = new ArrayList<HeaderRule>();
        for (var domain : network.path("rules").properties()) {
            var headers = new LinkedHashMap<String, String>(); // one rule per domain, its transforms' headers together
            for (var rule : domain.getValue())
                for (var header : rule.path("transform").path("headers").properties()) headers.put(header.getKey(), header.getValue().asText());
            if (!headers.isEmpty()) rules.add(new HeaderRule(domain.getKey(), headers));
        }
        return builder.rules(rules).build();
    }

    private static List<String> strings(JsonNode node, String field) {
        var out = new ArrayList<String>();
        if (node.isMissingNode() || node.isNull()) return out;
        if (!node.isArray()) throw new E2bException(400, "network." + field + " must be a list of addresses or domains");
        for (var entry : node) out.add(entry.asText());
        return out;
    }
}
