package io.stasis.runtime.runc;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One message of the stasis-init protocol: a verb and {@code key=value} fields, encoded as
 * NUL-terminated strings after a 32-bit little-endian length (see stasis-init.c).
 */
record InitFrame(String verb, List<String> fields) {
    static final int MAX_LENGTH = 4 << 20;

    InitFrame {
        fields = List.copyOf(fields);
    }

    static Builder of(String verb) {
        return new Builder(verb);
    }

    /** The first value of {@code key}, if present. */
    Optional<String> get(String key) {
        String prefix = key + "=";
        return fields.stream().filter(f -> f.startsWith(prefix)).map(f -> f.substring(prefix.length())).findFirst();
    }

    long getLong(String key) {
        return get(key).map(Long::parseLong).orElseThrow(() -> new IllegalStateException("stasis-init reply lacks " + key + ": " + this));
    }

    byte[] encode() {
        var payload = new ByteArrayOutputStream();
        payload.writeBytes(verb.getBytes(StandardCharsets.UTF_8));
        payload.write(0);
        for (String f : fields) {
            payload.writeBytes(f.getBytes(StandardCharsets.UTF_8));
            payload.write(0);
        }
        if (payload.size() > MAX_LENGTH) throw new IllegalArgumentException("request too large for stasis-init: " + payload.size() + " bytes");
        var frame = ByteBuffer.allocate(4 + payload.size()).order(ByteOrder.LITTLE_ENDIAN);
        frame.putInt(payload.size()).put(payload.toByteArray());
        return frame.array();
    }

    static InitFrame decode(byte[] payload) {
        var parts = new ArrayList<String>();
        int start = 0;
        for (int i = 0; i < payload.length; i++) {
            if (payload[i] == 0) {
                parts.add(new String(payload, start, i - start, StandardCharsets.UTF_8));
                start = i + 1;
            }
        }
        if (parts.isEmpty()) throw new IllegalStateException("empty frame from stasis-init");
        return new InitFrame(parts.getFirst(), parts.subList(1, parts.size()));
    }

    static final class Builder {
        private final String verb;
        private final List<String> fields = new ArrayList<>();

        private Builder(String verb) {
            this.verb = verb;
        }

        Builder with(String key, Object value) {
            String v = String.valueOf(value);
            if (v.indexOf('\0') >= 0) throw new IllegalArgumentException(key + " contains NUL");
            fields.add(key + "=" + v);
            return this;
        }

        InitFrame build() {
            return new InitFrame(verb, fields);
        }
    }
}
