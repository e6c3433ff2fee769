package io.stasis.testkit.fake;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * An event's data as the SQLite catalog gives it back after storing it as JSON: integral numbers
 * become {@link Long}, other numbers {@link Double}, maps and lists unmodifiable copies; anything
 * JSON cannot hold exactly (an {@code Instant}, NaN, a key that is not a string) is an
 * {@link IllegalArgumentException}, naming where it is.
 */
final class EventData {
    private EventData() {
    }

    static Map<String, Object> normalize(Map<String, ?> data) {
        return object(data, "data");
    }

    private static Map<String, Object> object(Map<?, ?> map, String path) {
        var out = new TreeMap<String, Object>(); // SQLite keeps the keys of a stored object sorted
        for (var entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String key))
                throw new IllegalArgumentException(path + " has a key that is not a string: " + entry.getKey());
            out.put(key, value(entry.getValue(), path + "." + key));
        }
        return Collections.unmodifiableMap(out);
    }

    private static Object value(Object value, String path) {
        return switch (value) {
            case null -> null;
            case String s -> s;
            case Boolean b -> b;
            case Long l -> l;
            case Integer i -> i.longValue();
            case Short s -> s.longValue();
            case Byte b -> b.longValue();
            case Double d -> finite(d, path);
            case Float f -> finite(f.doubleValue(), path);
            case Map<?, ?> m -> object(m, path);
            case List<?> list -> {
                var out = new ArrayList<Object>(list.size());
                for (int i = 0; i < list.size(); i++) out.add(value(list.get(i), path + "[" + i + "]"));
                yield Collections.unmodifiableList(out);
            }
            default -> throw new IllegalArgumentException(path + " is a " + value.getClass().getName()
                    + ", not a JSON value (string, number, boolean, null, map or list)");
        };
    }

    private static double finite(double d, String path) {
        if (!Double.isFinite(d)) throw new IllegalArgumentException(path + " is " + d + ", which JSON cannot hold");
        return d;
    }
}
