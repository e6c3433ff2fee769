package io.stasis.mcp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The arguments of one tool call, read by name with the checks of the tool's schema: a missing
 * required argument, a wrong type, a value out of range or an argument the schema does not name
 * is an {@link InvalidArgumentsException} naming it (the caller sees it as a tool error).
 */
final class ToolArguments {
    private final String tool;
    private final Map<String, Object> values;

    ToolArguments(String tool, Map<String, Object> values, Set<String> known) {
        this.tool = tool;
        this.values = values == null ? Map.of() : values;
        for (String name : this.values.keySet()) {
            if (!known.contains(name))
                throw new InvalidArgumentsException(tool + ": unknown argument '" + name + "'; it takes " + known);
        }
    }

    boolean has(String name) {
        return values.get(name) != null;
    }

    String string(String name) {
        String value = optString(name);
        if (value == null || value.isEmpty()) throw missing(name);
        return value;
    }

    /** A string that must be there but may be empty (a file's content). */
    String present(String name) {
        String value = optString(name);
        if (value == null) throw missing(name);
        return value;
    }

    String optString(String name) {
        Object value = values.get(name);
        if (value == null) return null;
        if (value instanceof String s) return s;
        throw wrongType(name, "a string", value);
    }

    long integer(String name, long fallback, long minimum, long maximum) {
        Object value = values.get(name);
        if (value == null) return fallback;
        long n;
        if (value instanceof Number number && number.doubleValue() == Math.rint(number.doubleValue())) {
            n = number.longValue();
        } else {
            throw wrongType(name, "an integer", value);
        }
        if (n < minimum || n > maximum)
            throw new InvalidArgumentsException(tool + ": '" + name + "' must be from " + minimum + " to " + maximum + ", was " + n);
        return n;
    }

    long requiredInteger(String name, long minimum, long maximum) {
        if (!has(name)) throw missing(name);
        return integer(name, 0, minimum, maximum);
    }

    Double optNumber(String name, double minimum, double maximum) {
        Object value = values.get(name);
        if (value == null) return null;
        if (!(value instanceof Number number)) throw wrongType(name, "a number", value);
        double d = number.doubleValue();
        if (d < minimum || d > maximum)
            throw new InvalidArgumentsException(tool + ": '" + name + "' must be from " + minimum + " to " + maximum + ", was " + d);
        return d;
    }

    boolean bool(String name, boolean fallback) {
        Object value = values.get(name);
        if (value == null) return fallback;
        if (value instanceof Boolean b) return b;
        throw wrongType(name, "true or false", value);
    }

    /** A list of strings; an absent argument is an empty list. */
    List<String> strings(String name) {
        Object value = values.get(name);
        if (value == null) return List.of();
        if (!(value instanceof List<?> list)) throw wrongType(name, "an array of strings", value);
        var strings = new ArrayList<String>(list.size());
        for (Object item : list) {
            if (!(item instanceof String s)) throw wrongType(name, "an array of strings", value);
            strings.add(s);
        }
        return strings;
    }

    /** An object of string values; an absent argument is an empty map. */
    Map<String, String> stringMap(String name) {
        Object value = values.get(name);
        if (value == null) return Map.of();
        if (!(value instanceof Map<?, ?> map)) throw wrongType(name, "an object of strings", value);
        var strings = new LinkedHashMap<String, String>();
        map.forEach((k, v) -> {
            if (!(v instanceof String s)) throw wrongType(name + "." + k, "a string", v);
            strings.put(String.valueOf(k), s);
        });
        return strings;
    }

    /** One of {@code choices}, or {@code fallback} when absent. */
    String choice(String name, String fallback, String... choices) {
        String value = optString(name);
        if (value == null) return fallback;
        for (String choice : choices) if (choice.equals(value)) return value;
        throw new InvalidArgumentsException(tool + ": '" + name + "' must be one of " + List.of(choices) + ", was '" + value + "'");
    }

    private InvalidArgumentsException missing(String name) {
        return new InvalidArgumentsException(tool + ": the argument '" + name + "' is required");
    }

    private InvalidArgumentsException wrongType(String name, String expected, Object value) {
        return new InvalidArgumentsException(tool + ": '" + name + "' must be " + expected + ", was "
                + (value instanceof String ? "a string" : value.getClass().getSimpleName().toLowerCase()));
    }
}
