package io.stasis.catalog.sql;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An event's {@code data}: a map of plain JSON values, stored as a JSON object in a TEXT column.
 *
 * <p>Accepted values: {@code null}, {@link String}, {@link Boolean}, integral numbers
 * ({@link Long}, {@link Integer}, {@link Short}, {@link Byte}), finite {@link Double} and
 * {@link Float}, {@link Map}s with String keys and {@link List}s of these, nested at will. Anything
 * else (an {@code Instant}, a record, NaN) is refused when written, naming where it is, rather than
 * stored as something that would read back different.
 *
 * <p>Read back (and as {@link #normalize} returns them): integral numbers are {@link Long},
 * others {@link Double}; objects are unmodifiable maps with keys in sorted order (the order they
 * are stored in), arrays unmodifiable lists (which may hold {@code null}). So a value written as
 * {@code Integer 5} reads back as {@code Long 5}: callers should put longs in.
 */
final class JsonValues {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private JsonValues() {
    }

    /** The object's JSON text; {@link IllegalArgumentException} for a value JSON cannot hold exactly. */
    static String toJson(Map<String, ?> data) {
        return toNode(data, "data").toString();
    }

    /** The map as it will read back from the catalog. */
    static Map<String, Object> normalize(Map<String, ?> data) {
        return readObject(toNode(data, "data"));
    }

    static Map<String, Object> fromJson(String json) throws JsonProcessingException {
        JsonNode node = JSON.readTree(json);
        if (node == null || !node.isObject()) throw new IllegalArgumentException("event data is not a JSON object: " + json);
        return readObject(node);
    }

    private static ObjectNode toNode(Map<?, ?> map, String path) {
        var sorted = new TreeMap<String, Object>(); // one text per map, whatever its iteration order
        for (var entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String key))
                throw new IllegalArgumentException(path + " has a key that is not a string: " + entry.getKey());
            sorted.put(key, entry.getValue());
        }
        ObjectNode node = NODES.objectNode();
        sorted.forEach((key, value) -> node.set(key, toNode(value, path + "." + key)));
        return node;
    }

    private static JsonNode toNode(Object value, String path) {
        return switch (value) {
            case null -> NODES.nullNode();
            case String s -> NODES.textNode(s);
            case Boolean b -> NODES.booleanNode(b);
            case Long l -> NODES.numberNode(l);
            case Integer i -> NODES.numberNode(i.longValue());
            case Short s -> NODES.numberNode(s.longValue());
            case Byte b -> NODES.numberNode(b.longValue());
            case Double d -> finite(d, path);
            case Float f -> finite(f.doubleValue(), path);
            case Map<?, ?> m -> toNode(m, path);
            case List<?> list -> {
                ArrayNode array = NODES.arrayNode();
                for (int i = 0; i < list.size(); i++) array.add(toNode(list.get(i), path + "[" + i + "]"));
                yield array;
            }
            default -> throw new IllegalArgumentException(path + " is a " + value.getClass().getName()
                    + ", not a JSON value (string, number, boolean, null, map or list)");
        };
    }

    private static JsonNode finite(double d, String path) {
        if (!Double.isFinite(d)) throw new IllegalArgumentException(path + " is " + d + ", which JSON cannot hold");
        return NODES.numberNode(d);
    }

    private static Map<String, Object> readObject(JsonNode node) {
        var out = new LinkedHashMap<String, Object>();
        for (var entry : node.properties()) out.put(entry.getKey(), read(entry.getValue()));
        return Collections.unmodifiableMap(out);
    }

    private static Object read(JsonNode node) {
        if (node.isNull()) return null;
        if (node.isTextual()) return node.textValue();
        if (node.isBoolean()) return node.booleanValue();
        if (node.isIntegralNumber()) {
            if (!node.canConvertToLong()) throw new IllegalArgumentException("event data holds an integer beyond a long: " + node);
            return node.longValue();
        }
        if (node.isNumber()) return node.doubleValue();
        if (node.isObject()) return readObject(node);
        if (node.isArray()) {
            var out = new ArrayList<Object>(node.size());
            for (JsonNode element : node) out.add(read(element));
            return Collections.unmodifiableList(out);
        }
        throw new IllegalArgumentException("event data holds a value that is not plain JSON: " + node);
    }
}
