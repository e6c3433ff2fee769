package io.stasis.server.http;

import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.javalin.http.Context;
import io.stasis.core.error.StasisException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * JSON for the API. Requests are read strictly: unknown fields and values of the wrong type are
 * refused with 422 naming the field (typos must not pass silently), and so is a body of {@code null};
 * text that is not JSON at all is 400.
 */
final class Json {
    static final ObjectMapper MAPPER = JsonMapper.builder()
            .addModule(new JavaTimeModule())
            .addModule(new Jdk8Module())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .withCoercionConfig(LogicalType.Textual, c -> c
                    .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Boolean, c -> c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Integer, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Float, c -> c.setCoercion(CoercionInputShape.String, CoercionAction.Fail))
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            // A null inside a list or map (["ls", null]) is refused like a value of the wrong type.
            .defaultSetterInfo(JsonSetter.Value.forContentNulls(Nulls.FAIL))
            .build();

    private Json() {
    }

    /** The request body as {@code type}; an empty body reads as {@code {}}. */
    static <T> T body(Context ctx, Class<T> type) {
        try (InputStream in = ctx.bodyInputStream()) {
            byte[] bytes = in.readAllBytes();
            ctx.attribute(NodeForwarder.BODY_READ, bytes); // for a create passed on to another node after it was read
            String text = new String(bytes, StandardCharsets.UTF_8);
            T value = MAPPER.readValue(text.isBlank() ? "{}" : text, type);
            // The JSON literal null reads as no value at all (or a NullNode): no operation takes it for its body.
            if (value == null || value instanceof JsonNode node && node.isNull())
                throw StasisException.invalid("body", "expected a JSON object, got null");
            return value;
        } catch (ValueInstantiationException e) {
            if (e.getCause() instanceof StasisException s) throw s;
            throw StasisException.invalid(path(e), rootMessage(e));
        } catch (UnrecognizedPropertyException e) {
            throw StasisException.invalid(path(e), "unknown field '" + e.getPropertyName() + "'; known fields: "
                    + e.getKnownPropertyIds().stream().map(String::valueOf).sorted().collect(Collectors.joining(", ")));
        } catch (InvalidFormatException e) {
            throw StasisException.invalid(path(e), "'" + e.getValue() + "' is not a valid " + simpleName(e.getTargetType()));
        } catch (MismatchedInputException e) {
            throw StasisException.invalid(path(e), "expected " + expected(e.getTargetType()));
        } catch (JsonProcessingException e) {
            throw StasisException.malformed("the body is not valid JSON: " + e.getOriginalMessage());
        } catch (IOException e) { // reading the body: it ended before its length, or the client went
            throw StasisException.malformed("the body could not be read whole: " + e.getMessage());
        }
    }

    private static String path(JsonMappingException e) {
        var out = new StringBuilder();
        for (var ref : e.getPath()) {
            if (ref.getFieldName() != null) {
                if (!out.isEmpty()) out.append('.');
                out.append(ref.getFieldName());
            } else if (ref.getIndex() >= 0) out.append('[').append(ref.getIndex()).append(']');
        }
        return out.isEmpty() ? "body" : out.toString();
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) t = t.getCause();
        return t.getMessage();
    }

    private static String expected(Class<?> type) {
        if (type == null) return "a different type";
        if (Number.class.isAssignableFrom(type) || type.isPrimitive() && type != boolean.class) return "a number";
        if (type == Boolean.class || type == boolean.class) return "true or false";
        if (type == String.class) return "a string";
        if (Collection.class.isAssignableFrom(type)) return "an array";
        if (Map.class.isAssignableFrom(type) || type.isRecord()) return "an object";
        return "a " + simpleName(type);
    }

    private static String simpleName(Class<?> type) {
        return type == null ? "value" : type.getSimpleName().toLowerCase(Locale.ROOT);
    }

    static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise " + value.getClass(), e);
        }
    }
}
