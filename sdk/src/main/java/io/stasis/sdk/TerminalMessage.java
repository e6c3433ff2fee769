package io.stasis.sdk;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

/**
 * The JSON control messages of the terminal WebSocket (its text frames; binary frames are the
 * terminal's bytes). From the server: {@code started}, {@code exit}, {@code error}; from the
 * client: {@code resize}, {@code eof}.
 */
sealed interface TerminalMessage {
    /** The process runs; always the first message of a session. */
    record Started(long pid) implements TerminalMessage {
    }

    /** The process ended; the server closes the socket next. */
    record Exit(int exitCode) implements TerminalMessage {
    }

    /** A refused control message, or a failed start (the socket then closes with 1008). */
    record Error(String code, String message) implements TerminalMessage {
        StasisApiException toException() {
            return ApiErrors.create(ApiErrors.documentedStatus(code), code, message, Map.of(), null);
        }
    }

    /** A message type this SDK does not know: ignored. */
    record Other(String type) implements TerminalMessage {
    }

    /** Reads one text frame. @throws StasisClientException when it is not a JSON object with a {@code type} */
    static TerminalMessage parse(String text) {
        JsonNode json;
        try {
            json = Wire.MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new StasisClientException("the terminal sent a control message that is not JSON: " + e.getOriginalMessage(), e);
        }
        if (json == null || !json.isObject() || !json.path("type").isTextual()) {
            throw new StasisClientException("the terminal sent a control message without a type: " + text);
        }
        String type = json.get("type").asText();
        return switch (type) {
            case "started" -> new Started(json.path("pid").asLong());
            case "exit" -> new Exit(json.path("exitCode").asInt(-1));
            case "error" -> new Error(json.path("code").asText("internal"), json.path("message").asText(""));
            default -> new Other(type);
        };
    }

    /** The client's end of input. */
    static String endOfInput() {
        return "{\"type\":\"eof\"}";
    }

    /** The client's resize message. */
    static String resize(TerminalSize size) {
        return "{\"type\":\"resize\",\"cols\":" + size.cols() + ",\"rows\":" + size.rows() + "}";
    }
}
