package io.stasis.catalog.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

/**
 * The JSON the catalog keeps in its lifecycle and network policy columns is a persisted format:
 * rows written by every earlier version must still read, and what this version writes must not
 * change by accident. The strings below are those rows, as written.
 */
class PersistedJsonTest {
    private static final String LIFECYCLE = "{\"pauseAfterIdle\":\"PT15S\",\"standbyAfterIdle\":\"PT2M\",\"hibernateAfterIdle\":\"PT30M\","
            + "\"stopAfterIdle\":null,\"deleteAfterIdle\":\"PT720H\",\"maxAge\":\"PT168H\",\"autoResume\":true,\"checkpointEvery\":\"PT5M\","
            + "\"atMaxAge\":\"standby\",\"wakeFor\":\"PT10M\"}";
    /** Before atMaxAge and wakeFor: the age limit deletes. */
    private static final String LIFECYCLE_WITHOUT_AGE_ACTION = "{\"pauseAfterIdle\":\"PT15S\",\"standbyAfterIdle\":\"PT2M\",\"hibernateAfterIdle\":\"PT30M\","
            + "\"stopAfterIdle\":null,\"deleteAfterIdle\":\"PT720H\",\"maxAge\":\"PT168H\",\"autoResume\":true,\"checkpointEvery\":\"PT5M\"}";
    /** Before standby existed (V2 migration's shape), and before checkpointEvery. */
    private static final String LIFECYCLE_WITHOUT_STANDBY = "{\"pauseAfterIdle\":\"PT15S\",\"hibernateAfterIdle\":\"PT30M\","
            + "\"stopAfterIdle\":null,\"deleteAfterIdle\":\"PT720H\",\"maxAge\":null,\"autoResume\":false}";
    private static final String NETWORK = "{\"egress\":{\"default\":\"deny\",\"allow\":[\"pypi.org\",\"api.example.com\",\"10.1.0.0/16\"],"
            + "\"deny\":[]},\"rules\":[{\"domain\":\"api.example.com\",\"headers\":{\"Authorization\":\"Bearer {{secret:API_TOKEN}}\"}}]}";
    /** Before header rules existed. */
    private static final String NETWORK_WITHOUT_RULES = "{\"egress\":{\"default\":\"allow\",\"allow\":[],\"deny\":[\"169.254.0.0/16\"]}}";

    private static final LifecyclePolicy POLICY = new LifecyclePolicy(Optional.of(Duration.ofSeconds(15)), Optional.of(Duration.ofMinutes(2)),
            Optional.of(Duration.ofMinutes(30)), Optional.empty(), Optional.of(Duration.ofDays(30)), Optional.of(Duration.ofDays(7)), true, Optional.of(Duration.ofMinutes(5)),
            IdlePolicy.Action.STANDBY, Optional.of(Duration.ofMinutes(10)));

    private static NetworkPolicy network() {
        var egress = new EgressPolicy(EgressPolicy.Action.DENY, List.of(EgressRule.parse("pypi.org", "allow"),
                EgressRule.parse("api.example.com", "allow"), EgressRule.parse("10.1.0.0/16", "allow")), List.of());
        return new NetworkPolicy(egress, List.of(HeaderRule.of("api.example.com", Map.of("Authorization", "Bearer {{secret:API_TOKEN}}"), "rules[0]")));
    }

    @Test
    void lifecycleWritesAndReadsItsRows() throws Exception {
        assertThat(LifecycleJson.toJson(POLICY)).isEqualTo(LIFECYCLE);
        assertThat(LifecycleJson.fromJson(LIFECYCLE)).isEqualTo(POLICY);
        assertThat(LifecycleJson.fromJson(LIFECYCLE_WITHOUT_AGE_ACTION))
                .isEqualTo(POLICY.withMaxAge(POLICY.maxAge(), IdlePolicy.Action.DELETE, Optional.empty()));
        assertThatThrownBy(() -> LifecycleJson.fromJson(LIFECYCLE.replace("\"standby\"", "\"sleep\"")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("atMaxAge");
        assertThat(LifecycleJson.fromJson(LIFECYCLE_WITHOUT_STANDBY)).isEqualTo(new LifecyclePolicy(Optional.of(Duration.ofSeconds(15)),
                Optional.empty(), Optional.of(Duration.ofMinutes(30)), Optional.empty(), Optional.of(Duration.ofDays(30)), Optional.empty(), false, Optional.empty()));
        assertThatThrownBy(() -> LifecycleJson.fromJson("{\"pauseAfterIdle\":\"PT15S\"}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("autoResume");
    }

    @Test
    void networkWritesAndReadsItsRows() {
        assertThat(NetworkJson.toJson(network())).isEqualTo(NETWORK);
        assertThat(NetworkJson.fromJson(NETWORK)).isEqualTo(network());
        var old = NetworkJson.fromJson(NETWORK_WITHOUT_RULES);
        assertThat(old.rules()).isEmpty();
        assertThat(old.egress().defaultAction()).isEqualTo(EgressPolicy.Action.ALLOW);
        assertThat(old.egress().deny()).extracting(Object::toString).containsExactly("169.254.0.0/16");
        assertThatThrownBy(() -> NetworkJson.fromJson("{\"rules\":[]}"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("unreadable network policy");
    }
}
