package io.stasis.mcp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the JSON Schemas of the tools' inputs: an object whose properties each carry a
 * description an LLM reads, with {@code additionalProperties: false} (the API rejects unknown
 * fields too, and {@link ToolArguments} checks the names).
 *
 * <pre>{@code
 * Map<String, Object> schema = JsonSchemas.object()
 *         .required("sandbox", JsonSchemas.string("The sandbox's id (sbx_...) or name."))
 *         .optional("recursive", JsonSchemas.bool("Remove a directory and everything in it."))
 *         .build();
 * }</pre>
 */
final class JsonSchemas {
    private JsonSchemas() {
    }

    static ObjectSchema object() {
        return new ObjectSchema();
    }

    static Map<String, Object> string(String description) {
        return property("string", description);
    }

    static Map<String, Object> enumeration(String description, String... values) {
        var schema = string(description);
        schema.put("enum", List.of(values));
        return schema;
    }

    static Map<String, Object> integer(String description, long minimum, long maximum) {
        var schema = property("integer", description);
        schema.put("minimum", minimum);
        schema.put("maximum", maximum);
        return schema;
    }

    static Map<String, Object> number(String description, double minimum, double maximum) {
        var schema = property("number", description);
        schema.put("minimum", minimum);
        schema.put("maximum", maximum);
        return schema;
    }

    static Map<String, Object> bool(String description) {
        return property("boolean", description);
    }

    static Map<String, Object> stringArray(String description) {
        var schema = property("array", description);
        schema.put("items", Map.of("type", "string"));
        return schema;
    }

    static Map<String, Object> stringMap(String description) {
        var schema = property("object", description);
        schema.put("additionalProperties", Map.of("type", "string"));
        return schema;
    }

    private static Map<String, Object> property(String type, String description) {
        var schema = new LinkedHashMap<String, Object>();
        schema.put("type", type);
        schema.put("description", description);
        return schema;
    }

    /** An object schema under construction; properties keep the order they are added in. */
    static final class ObjectSchema {
        private final Map<String, Object> properties = new LinkedHashMap<>();
        private final List<String> required = new ArrayList<>();

        ObjectSchema required(String name, Map<String, Object> schema) {
            required.add(name);
            return optional(name, schema);
        }

        ObjectSchema optional(String name, Map<String, Object> schema) {
            if (properties.putIfAbsent(name, schema) != null) throw new IllegalStateException("property " + name + " twice");
            return this;
        }

        Map<String, Object> build() {
            var schema = new LinkedHashMap<String, Object>();
            schema.put("type", "object");
            schema.put("properties", properties);
            if (!required.isEmpty()) schema.put("required", List.copyOf(required));
            schema.put("additionalProperties", false);
            return schema;
        }
    }
}
