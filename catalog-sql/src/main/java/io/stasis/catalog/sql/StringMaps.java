package io.stasis.catalog.sql;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.TreeMap;

/** Maps of strings (env, metadata) as JSON objects in a TEXT column, which SQLite's JSON functions can query. */
final class StringMaps {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, String>> MAP_OF_STRINGS = new TypeReference<>() {
    };

    private StringMaps() {
    }

    static String toJson(Map<String, String> map) {
        try {
            // Sorted keys: the same map always gives the same text, which keeps the file diffable.
            return JSON.writeValueAsString(new TreeMap<>(map));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings always serializes", e);
        }
    }

    static Map<String, String> fromJson(String json) throws JsonProcessingException {
        return JSON.readValue(json, MAP_OF_STRINGS);
    }
}
