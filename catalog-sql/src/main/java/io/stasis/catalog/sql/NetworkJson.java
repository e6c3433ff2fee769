package io.stasis.catalog.sql;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.core.error.StasisException;
import io.stasis.core.network.NetworkPolicy;
import io.stasis.json.PolicyJson;

/**
 * A {@link NetworkPolicy} as the JSON object in the {@code policy} column, in the API's shape
 * ({@link PolicyJson}, its one reader and writer):
 * {@code {"egress":{"default":"deny","allow":["example.com","10.0.0.0/8"],"deny":[]},
 * "rules":[{"domain":"api.example.com","headers":{"Authorization":"Bearer {{secret:TOKEN}}"}}]}}.
 * Rows written before header rules existed have no {@code rules}: read as none.
 */
final class NetworkJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private NetworkJson() {
    }

    static String toJson(NetworkPolicy policy) {
        try {
            return JSON.writeValueAsString(PolicyJson.network(policy));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a network policy always serializes", e);
        }
    }

    static NetworkPolicy fromJson(String text) {
        try {
            return PolicyJson.readStoredNetwork(JSON.readTree(text));
        } catch (JsonProcessingException | IllegalArgumentException | StasisException e) {
            throw new IllegalStateException("unreadable network policy in the catalog: " + text, e);
        }
    }
}
