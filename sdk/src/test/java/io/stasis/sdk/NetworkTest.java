package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** Network policies on create, and a sandbox's network read and replaced, against the fake API. */
class NetworkTest {
    static final String VIEW = """
            {"sandboxId": "sbx_1", "enabled": true, "address": "10.200.0.2", "gateway": "10.200.0.1", "dns": "10.200.0.1",
             "egress": {"default": "deny", "allow": ["pypi.org", "*.pythonhosted.org"], "deny": ["10.0.0.0/8"]},
             "rules": [], "deniedConnections": 3}""";
    static final String SANDBOX = """
            {"id": "sbx_1", "template": "tiny", "state": "running", "createdAt": "2026-11-29T10:00:00Z"}""";

    @AutoClose
    private final FakeApi api = FakeApi.start();
    @AutoClose
    private final StasisClient client = api.client();

    private static NetworkPolicy pip() {
        return NetworkPolicy.builder().denyByDefault().allow("pypi.org", "*.pythonhosted.org").deny("10.0.0.0/8").build();
    }

    @Test
    void createSendsThePolicyAsTheNetworkObject() {
        api.json("POST /v1/sandboxes", 201, SANDBOX);

        client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").network(pip()).build());

        assertThat(api.last().bodyText()).isEqualTo("{\"template\":\"tiny\",\"network\":{\"egress\":{\"default\":\"deny\","
                + "\"allow\":[\"pypi.org\",\"*.pythonhosted.org\"],\"deny\":[\"10.0.0.0/8\"]}}}");

        client.sandboxes().create(CreateSandboxRequest.builder().template("tiny").build());
        assertThat(api.last().bodyText()).as("no policy: the server's default").isEqualTo("{\"template\":\"tiny\"}");
    }

    @Test
    void networkReadsTheView() {
        api.json("GET /v1/sandboxes/demo/network", 200, VIEW);

        NetworkInfo net = client.sandboxes().network("demo");

        assertThat(net.enabled()).isTrue();
        assertThat(net.address()).isEqualTo("10.200.0.2");
        assertThat(net.gateway()).isEqualTo("10.200.0.1");
        assertThat(net.dns()).isEqualTo("10.200.0.1");
        assertThat(net.deniedConnections()).isEqualTo(3);
        assertThat(net.egress()).isEqualTo(new EgressPolicy(EgressPolicy.Action.DENY, List.of("pypi.org", "*.pythonhosted.org"),
                List.of("10.0.0.0/8")));
        assertThat(net.policy()).isEqualTo(pip());
    }

    @Test
    void aServiceWithoutNetworksReportsNullAddresses() {
        api.json("GET /v1/sandboxes/demo/network", 200, """
                {"sandboxId": "sbx_1", "enabled": false, "address": null, "gateway": null, "dns": null,
                 "egress": {"default": "allow", "allow": [], "deny": []}, "deniedConnections": 0}""");

        NetworkInfo net = client.sandboxes().network("demo");

        assertThat(net.enabled()).isFalse();
        assertThat(net.address()).isNull();
        assertThat(net.egress().defaultAction()).isEqualTo(EgressPolicy.Action.ALLOW);
    }

    @Test
    void updateNetworkPutsTheWholePolicyAndReturnsTheView() {
        api.json("GET /v1/sandboxes/sbx_1", 200, SANDBOX);
        api.json("PUT /v1/sandboxes/sbx_1/network", 200, VIEW);
        Sandbox sandbox = client.sandboxes().get("sbx_1");

        NetworkInfo net = sandbox.updateNetwork(NetworkPolicy.allowAll().toBuilder().deny("169.254.0.0/16", " example.com ").build());

        assertThat(api.last().method()).isEqualTo("PUT");
        assertThat(api.last().header("Content-Type")).startsWith("application/json");
        assertThat(api.last().bodyText()).isEqualTo("{\"egress\":{\"default\":\"allow\",\"allow\":[],\"deny\":[\"169.254.0.0/16\",\"example.com\"]}}");
        assertThat(net.address()).isEqualTo("10.200.0.2");
    }

    @Test
    void aBadEntryIsAnInvalidRequest() {
        api.json("PUT /v1/sandboxes/demo/network", 422, """
                {"error": {"code": "invalid_request", "message": "network.egress.allow[0]: 'not a domain!' is neither a domain (example.com, *.example.com) nor an IP address or CIDR network",
                 "details": {"field": "network.egress.allow[0]"}}}""");

        assertThatThrownBy(() -> client.sandboxes().updateNetwork("demo", NetworkPolicy.builder().allow("not a domain!").build()))
                .isInstanceOf(InvalidRequestException.class).hasMessageContaining("network.egress.allow[0]");
    }

    @Test
    void theBuilderRefusesEmptyEntriesAndCopiesPolicies() {
        assertThatThrownBy(() -> NetworkPolicy.builder().allow("a.example", " ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("allow[1] is empty");
        assertThatThrownBy(() -> NetworkPolicy.builder().deny((String) null)).isInstanceOf(NullPointerException.class);

        NetworkPolicy base = pip();
        NetworkPolicy more = base.toBuilder().allow("github.com").allowByDefault().build();
        assertThat(base.egress().allow()).containsExactly("pypi.org", "*.pythonhosted.org");
        assertThat(more.egress().allow()).containsExactly("pypi.org", "*.pythonhosted.org", "github.com");
        assertThat(more.egress().defaultAction()).isEqualTo(EgressPolicy.Action.ALLOW);
        assertThat(NetworkPolicy.denyAll()).isEqualTo(NetworkPolicy.builder().build());
        assertThat(StasisJson.writeLine(NetworkPolicy.denyAll())).isEqualTo("{\"egress\":{\"default\":\"deny\",\"allow\":[],\"deny\":[]}}");
    }

    @Test
    void headerRulesTravelWithThePolicyAndSurviveAReadModifyWrite() {
        var policy = NetworkPolicy.builder().allow("api.example.com")
                .rule("api.example.com", "Authorization", "Bearer {{secret:EXAMPLE_KEY}}").build();
        assertThat(StasisJson.writeLine(policy)).isEqualTo("{\"egress\":{\"default\":\"deny\",\"allow\":[\"api.example.com\"],\"deny\":[]},"
                + "\"rules\":[{\"domain\":\"api.example.com\",\"headers\":{\"Authorization\":\"Bearer {{secret:EXAMPLE_KEY}}\"}}]}");
        var changed = policy.toBuilder().allow("pypi.org").build();
        assertThat(changed.rules()).isEqualTo(policy.rules());
        var info = new NetworkInfo("sbx_1", true, "10.200.0.2", "10.200.0.1", "10.200.0.1", policy.egress(), policy.rules(), 0);
        assertThat(info.policy()).isEqualTo(policy);
    }
}
