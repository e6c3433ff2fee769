package io.stasis.server.http;

import io.stasis.json.PolicyJson;
import io.stasis.core.network.NetworkService;
import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The API's view of a sandbox's network: its addresses, its policy (written by {@link PolicyJson},
 * which also reads the policy a request gives) and its denied connections.
 */
final class NetworkJson {
    private NetworkJson() {
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
