package io.stasis.e2b;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.stasis.e2b.E2bErrors.E2bException;
import io.stasis.sdk.EgressPolicy;
import io.stasis.sdk.HeaderRule;
import java.util.Map;
import org.junit.jupiter.api.Test;

class E2bNetworkTest {
    private static JsonNode json(String text) throws Exception {
        return ConnectRpc.JSON.readTree(text);
    }

    @Test
    void noSettingsKeepTheServersDefault() throws Exception {
        assertThat(E2bNetwork.of(json("{\"templateID\": \"base\"}"))).isEmpty();
    }

    @Test
    void noInternetDeniesEverything() throws Exception {
        var policy = E2bNetwork.of(json("{\"allow_internet_access\": false, \"network\": {\"allowOut\": [\"example.com\"]}}")).orElseThrow();
        assertThat(policy.egress().defaultAction()).isEqualTo(EgressPolicy.Action.DENY);
        assertThat(policy.egress().allow()).isEmpty();
    }

    @Test
    void denyingAllTrafficMakesDenyTheDefaultWithAllowOutItsExceptions() throws Exception {
        var policy = E2bNetwork.of(json("{\"network\": {\"allowOut\": [\"example.com\", \"10.1.0.0/16\"], \"denyOut\": [\"0.0.0.0/0\"]}}"))
                .orElseThrow();
        assertThat(policy.egress().defaultAction()).isEqualTo(EgressPolicy.Action.DENY);
        assertThat(policy.egress().allow()).containsExactly("example.com", "10.1.0.0/16");
        assertThat(policy.egress().deny()).isEmpty();
    }

    @Test
    void otherwiseTheDefaultIsAllowAndDenyOutIsRefused() throws Exception {
        var policy = E2bNetwork.update(json("{\"denyOut\": [\"203.0.113.0/24\"], \"rules\": {\"api.example.com\": "
                + "[{\"transform\": {\"headers\": {\"Authorization\": \"Bearer t\"}}}]}}"));
        assertThat(policy.egress().defaultAction()).isEqualTo(EgressPolicy.Action.ALLOW);
        assertThat(policy.egress().deny()).containsExactly("203.0.113.0/24");
        assertThat(policy.rules()).containsExactly(new HeaderRule("api.example.com", Map.of("Authorization", "Bearer t")));
    }

    @Test
    void entriesMustBeLists() {
        assertThatThrownBy(() -> E2bNetwork.update(json("{\"allowOut\": \"example.com\"}"))).isInstanceOf(E2bException.class);
    }
}
