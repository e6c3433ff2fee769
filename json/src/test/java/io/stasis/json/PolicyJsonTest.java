package io.stasis.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.error.ErrorCode;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.EgressPolicy;
import io.stasis.core.network.EgressRule;
import io.stasis.core.network.HeaderRule;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.core.policy.IdlePolicy;
import io.stasis.core.policy.LifecyclePolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A request's policy is checked field by field; what Stasis wrote reads back as it was. */
class PolicyJsonTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode json(String text) {
        try {
            return JSON.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static NetworkPolicy policy() {
        return new NetworkPolicy(new EgressPolicy(EgressPolicy.Action.DENY, List.of(EgressRule.parse("*.example.com", "t"),
                EgressRule.parse("10.1.0.0/16", "t")), List.of(EgressRule.parse("169.254.0.0/16", "t"))),
                List.of(HeaderRule.of("api.example.com", Map.of("Authorization", "Bearer {{secret:TOKEN}}"), "t")));
    }

    @Test
    void aWrittenPolicyReadsBackBothWays() throws Exception {
        var written = JSON.valueToTree(PolicyJson.network(policy()));
        assertThat(JSON.writeValueAsString(written)).isEqualTo("{\"egress\":{\"default\":\"deny\",\"allow\":[\"*.example.com\","
                + "\"10.1.0.0/16\"],\"deny\":[\"169.254.0.0/16\"]},\"rules\":[{\"domain\":\"api.example.com\",\"headers\":"
                + "{\"Authorization\":\"Bearer {{secret:TOKEN}}\"}}]}");
        assertThat(PolicyJson.readNetwork((JsonNode) written, "network")).isEqualTo(policy());
        assertThat(PolicyJson.readStoredNetwork((JsonNode) written)).isEqualTo(policy());
    }

    @Test
    void aRequestNamesTheFieldThatIsWrong() {
        assertThatThrownBy(() -> PolicyJson.readNetwork(json("{\"egress\":{\"default\":\"deny\",\"allow\":[\"fd00::/8\"]}}"), "network"))
                .isInstanceOfSatisfying(StasisException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_REQUEST))
                .hasMessageContaining("network.egress.allow[0]").hasMessageContaining("IPv6");
        assertThatThrownBy(() -> PolicyJson.readNetwork(json("{\"egress\":{\"default\":\"deny\",\"alow\":[]}}"), "network"))
                .hasMessageContaining("network.egress.alow").hasMessageContaining("unknown field");
        assertThat(PolicyJson.readNetwork(json("{}"), "network").egress()).as("a request may leave egress out: deny all")
                .isEqualTo(EgressPolicy.DENY_ALL);
    }

    @Test
    void aStoredPolicyIsReadAsWrittenButMustBeWhole() throws Exception {
        // An operator's default policy (--egress-allow) is not held to what a request may ask.
        var stored = PolicyJson.readStoredNetwork(json("{\"egress\":{\"default\":\"allow\",\"allow\":[],\"deny\":[\"fd00::/8\"]}}"));
        assertThat(stored.egress().deny()).containsExactly(EgressRule.parse("fd00::/8", "t"));
        assertThat(stored.rules()).as("rows from before header rules").isEmpty();
        assertThatThrownBy(() -> PolicyJson.readStoredNetwork(json("{\"rules\":[]}"))).isInstanceOf(StasisException.class);
    }

    @Test
    void aLifecycleChangeKeepsWhatItDoesNotName() throws Exception {
        var merged = PolicyJson.mergeLifecycle(LifecyclePolicy.DEFAULT, json("{\"pauseAfterIdle\":\"30s\",\"maxAge\":null}"));
        assertThat(merged.pauseAfterIdle()).contains(Duration.ofSeconds(30));
        assertThat(merged.maxAge()).isEqualTo(Optional.empty());
        assertThat(merged.hibernateAfterIdle()).isEqualTo(LifecyclePolicy.DEFAULT.hibernateAfterIdle());
        assertThat(PolicyJson.lifecycle(merged)).containsEntry("pauseAfterIdle", "30s");
        assertThatThrownBy(() -> PolicyJson.mergeLifecycle(LifecyclePolicy.DEFAULT, json("{\"pauseAfter\":\"1s\"}")))
                .hasMessageContaining("lifecycle.pauseAfter");
    }

    @Test
    void anAgeLimitMaySleepInsteadOfDelete() throws Exception {
        var sleeps = PolicyJson.mergeLifecycle(LifecyclePolicy.DEFAULT, json("{\"maxAge\":\"5m\",\"atMaxAge\":\"standby\",\"wakeFor\":\"10m\"}"));
        assertThat(sleeps.atMaxAge()).isEqualTo(IdlePolicy.Action.STANDBY);
        assertThat(sleeps.wakeFor()).contains(Duration.ofMinutes(10));
        assertThat(PolicyJson.lifecycle(sleeps)).containsEntry("maxAge", "5m").containsEntry("atMaxAge", "standby").containsEntry("wakeFor", "10m");
        assertThat(PolicyJson.lifecycle(LifecyclePolicy.DEFAULT)).containsEntry("atMaxAge", "delete").containsEntry("wakeFor", null);
        assertThat(PolicyJson.mergeLifecycle(sleeps, json("{\"pauseAfterIdle\":\"1m\"}")).atMaxAge()).isEqualTo(IdlePolicy.Action.STANDBY);
        assertThatThrownBy(() -> PolicyJson.mergeLifecycle(LifecyclePolicy.DEFAULT, json("{\"atMaxAge\":\"sleep\"}")))
                .hasMessageContaining("lifecycle.atMaxAge").hasMessageContaining("standby");
        assertThatThrownBy(() -> PolicyJson.mergeLifecycle(LifecyclePolicy.DEFAULT, json("{\"atMaxAge\":3}")))
                .hasMessageContaining("lifecycle.atMaxAge");
        assertThatThrownBy(() -> PolicyJson.mergeLifecycle(LifecyclePolicy.DEFAULT, json("{\"wakeFor\":\"0s\"}")))
                .hasMessageContaining("lifecycle.wakeFor");
    }
}
