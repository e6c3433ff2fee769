package io.stasis.cli;

import static io.stasis.cli.FakeServer.error;
import static io.stasis.cli.FakeServer.sandbox;
import static org.assertj.core.api.Assertions.assertThat;

import io.stasis.sdk.Event;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;

/** {@code stasis network show|set} and the policy options of {@code create}, against a fake server. */
class NetworkCommandsTest {
    static final String VIEW = """
            {"sandboxId": "sbx_1", "enabled": true, "address": "10.200.0.2", "gateway": "10.200.0.1", "dns": "10.200.0.1",
             "egress": {"default": "deny", "allow": ["pypi.org", "*.pythonhosted.org"], "deny": []}, "deniedConnections": 3}""";

    @AutoClose
    private final FakeServer server = FakeServer.start();
    private final CliRunner cli = new CliRunner(server);

    @Test
    void showPrintsTheAddressesAndThePolicy() {
        server.json("GET /v1/sandboxes/demo/network", 200, VIEW);
        assertThat(cli.run("network", "show", "demo")).isZero();
        assertThat(cli.out()).isEqualTo("""
                SANDBOX   sbx_1
                ADDRESS   10.200.0.2
                GATEWAY   10.200.0.1
                DNS       10.200.0.1
                DEFAULT   deny
                ALLOW     pypi.org
                          *.pythonhosted.org
                DENY      -
                DENIED    3
                """);

        assertThat(cli.run("--json", "network", "show", "demo")).isZero();
        assertThat(cli.out()).contains("\"address\" : \"10.200.0.2\"", "\"default\" : \"deny\"", "\"deniedConnections\" : 3");
    }

    @Test
    void showSaysWhenTheServiceHasNoNetworks() {
        server.json("GET /v1/sandboxes/demo/network", 200, """
                {"sandboxId": "sbx_1", "enabled": false, "address": null, "gateway": null, "dns": null,
                 "egress": {"default": "deny", "allow": [], "deny": []}, "deniedConnections": 0}""");
        assertThat(cli.run("network", "show", "demo")).isZero();
        assertThat(cli.out()).contains("NETWORK   none (loopback only; the service runs with --network none)").doesNotContain("ADDRESS");
    }

    @Test
    void setSendsTheWholePolicyFromItsOptions() {
        server.json("PUT /v1/sandboxes/demo/network", 200, VIEW);
        assertThat(cli.run("network", "set", "demo", "--allow", "pypi.org,*.pythonhosted.org,", "--allow", "1.2.3.4",
                "--deny", "10.0.0.0/8")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"egress\":{\"default\":\"deny\","
                + "\"allow\":[\"pypi.org\",\"*.pythonhosted.org\",\"1.2.3.4\"],\"deny\":[\"10.0.0.0/8\"]}}");
        assertThat(cli.out()).startsWith("SANDBOX   sbx_1\n");

        assertThat(cli.run("network", "set", "demo", "--default", "allow")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"egress\":{\"default\":\"allow\",\"allow\":[],\"deny\":[]}}");
    }

    @Test
    void aBadDefaultIsAUsageErrorAndABadEntryTheServersError() {
        assertThat(cli.run("network", "set", "demo", "--default", "maybe")).isEqualTo(2);
        assertThat(cli.err()).contains("must be 'allow' or 'deny', was 'maybe'");
        assertThat(server.requests).isEmpty();

        server.json("PUT /v1/sandboxes/demo/network", 422, error("invalid_request",
                "network.egress.allow[0]: 'not a domain!' is neither a domain (example.com, *.example.com) nor an IP address or CIDR network"));
        assertThat(cli.run("network", "set", "demo", "--allow", "not a domain!")).isEqualTo(ExitCodes.INVALID_REQUEST);
        assertThat(cli.err()).startsWith("error: invalid_request: network.egress.allow[0]");
    }

    @Test
    void createSendsAPolicyOnlyWhenAnOptionNamesOne() {
        server.json("POST /v1/sandboxes", 201, sandbox("sbx_new", null));
        assertThat(cli.run("create", "--template", "tiny", "--egress-default", "deny", "--allow", "pypi.org", "--deny", "10.0.0.0/8")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"template\":\"tiny\",\"network\":{\"egress\":{\"default\":\"deny\","
                + "\"allow\":[\"pypi.org\"],\"deny\":[\"10.0.0.0/8\"]}}}");

        assertThat(cli.run("create", "--template", "tiny", "--egress-default", "allow")).isZero();
        assertThat(server.requests.getLast().text()).contains("\"network\":{\"egress\":{\"default\":\"allow\",\"allow\":[],\"deny\":[]}}");

        assertThat(cli.run("create", "--template", "tiny")).isZero();
        assertThat(server.requests.getLast().text()).isEqualTo("{\"template\":\"tiny\"}");
    }

    @Test
    void networkAloneShowsItsUsageAndSetSaysItReplaces() {
        assertThat(cli.run("network")).isEqualTo(2);
        assertThat(cli.err()).contains("show", "set");
        assertThat(cli.run("network", "set", "--help")).isZero();
        assertThat(cli.out()).contains("Replace a sandbox's whole egress policy", "entries not given again are dropped");
    }

    @Test
    void eventsShowEgressAttemptsOnOneLine() {
        var at = Instant.parse("2026-11-29T10:00:00Z");
        assertThat(EventsCommand.summary(new Event(7, "network.denied", at, Map.of("sandboxId", "sbx_1", "domain", "denied.test",
                "address", "192.0.2.7", "port", 443, "protocol", "tcp", "rule", "default deny"))))
                .isEqualTo("sbx_1 denied.test 192.0.2.7:443 tcp (default deny)");
        assertThat(EventsCommand.summary(new Event(8, "network.denied", at, Map.of("sandboxId", "sbx_1", "domain", "denied.test",
                "port", 53, "protocol", "dns", "rule", "deny *.test"))))
                .isEqualTo("sbx_1 denied.test port 53 dns (deny *.test)");
        assertThat(EventsCommand.summary(new Event(9, "network.denied", at, Map.of("sandboxId", "sbx_1",
                "address", "169.254.169.254", "port", 80, "protocol", "tcp", "rule", "blocked link-local"))))
                .isEqualTo("sbx_1 169.254.169.254:80 tcp (blocked link-local)");
    }
}
