package io.stasis.sdk;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * The SDK's one JSON mapper. Unknown response fields are ignored so that an older SDK keeps
 * working against a newer server; request records carry {@code @JsonInclude(NON_NULL)} so that
 * no null field is ever sent (the server rejects unknown fields, and null is not "absent").
 */
final class Wire {
    static final ObjectMapper MAPPER = newMapper();

    private Wire() {
    }

    private static ObjectMapper newMapper() {
        var module = new SimpleModule("stasis-wire");
        // RFC 3339 timestamps without pulling in jackson-datatype-jsr310.
        module.addSerializer(Instant.class, new JsonSerializer<>() {
            @Override
            public void serialize(Instant value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
                gen.writeString(value.toString());
            }
        });
        module.addDeserializer(Instant.class, new JsonDeserializer<>() {
            @Override
            public Instant deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
                String text = p.getValueAsString();
                if (text == null || text.isBlank()) return null;
                try {
                    return OffsetDateTime.parse(text).toInstant();
                } catch (DateTimeParseException e) {
                    return (Instant) ctxt.handleWeirdStringValue(Instant.class, text, "not an RFC 3339 time");
                }
            }
        });
        // Idle-policy durations as the API writes them ("15s", "10m", "7d"); JSON null is "never".
        module.addSerializer(Duration.class, new JsonSerializer<>() {
            @Override
            public void serialize(Duration value, JsonGenerator gen, SerializerProvider serializers) throws IOException {
                gen.writeString(ApiDurations.format(value));
            }
        });
        module.addDeserializer(Duration.class, new JsonDeserializer<>() {
            @Override
            public Duration deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
                String text = p.getValueAsString();
                if (text == null || text.isBlank()) return null;
                try {
                    return ApiDurations.parse(text);
                } catch (IllegalArgumentException e) {
                    return (Duration) ctxt.handleWeirdStringValue(Duration.class, text, e.getMessage());
                }
            }
        });
        module.addSerializer(ExecResult.class, new ExecResultSerializer());
        module.addSerializer(FileChange.class, new FileChangeSerializer());
        return new ObjectMapper()
                .registerModule(module)
                .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
                .configure(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES, false)
                .configure(SerializationFeature.FAIL_ON_EMPTY_BEANS, false);
    }

    /** Writes a {@link FileChange} as the watch stream's event data ({@code from} only on moves). */
    private static final class FileChangeSerializer extends JsonSerializer<FileChange> {
        @Override
        public void serialize(FileChange c, JsonGenerator gen, SerializerProvider serializers) throws IOException {
            gen.writeStartObject();
            gen.writeStringField("type", c.kind().wireName());
            gen.writeStringField("path", c.path());
            if (c.fileType() != null) gen.writeStringField("fileType", c.fileType().wireName());
            if (c.from() != null) gen.writeStringField("from", c.from());
            gen.writeEndObject();
        }
    }

    /** Writes an {@link ExecResult} in the API's shape (text when UTF-8, else base64). */
    private static final class ExecResultSerializer extends JsonSerializer<ExecResult> {
        @Override
        public void serialize(ExecResult r, JsonGenerator gen, SerializerProvider serializers) throws IOException {
            boolean text = Utf8.isValid(r.stdoutBytes()) && Utf8.isValid(r.stderrBytes());
            gen.writeStartObject();
            gen.writeNumberField("exitCode", r.exitCode());
            gen.writeStringField("signal", r.signal());
            gen.writeStringField("stdout", text ? r.stdout() : Utf8.base64(r.stdoutBytes()));
            gen.writeStringField("stderr", text ? r.stderr() : Utf8.base64(r.stderrBytes()));
            gen.writeStringField("encoding", text ? "utf-8" : "base64");
            gen.writeBooleanField("stdoutTruncated", r.stdoutTruncated());
            gen.writeBooleanField("stderrTruncated", r.stderrTruncated());
            gen.writeBooleanField("timedOut", r.timedOut());
            gen.writeNumberField("durationMs", r.duration().toMillis());
            gen.writeEndObject();
        }
    }
}
