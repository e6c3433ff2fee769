package io.stasis.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.stasis.sdk.StasisApiException;
import io.stasis.sdk.StasisConnectionException;
import io.stasis.sdk.StasisJson;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a tool answers: text first (what an LLM reads), and the API's JSON as structured content
 * where there is an object to give. Failures are tool results too ({@code isError: true}), never
 * protocol errors, so the model sees the API's code and message and can correct itself.
 */
record ToolResult(String text, Object structured, boolean error) {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {
    };

    static ToolResult text(String text) {
        return new ToolResult(text, null, false);
    }

    /** {@code text}, with {@code wire} (an SDK object) as the API's JSON in the structured content. */
    static ToolResult of(String text, Object wire) {
        return new ToolResult(text, json(wire), false);
    }

    /** A list of SDK objects in the API's list shape {@code {"items": [...]}}. */
    static ToolResult list(String text, List<?> items) {
        var body = new LinkedHashMap<String, Object>();
        body.put("items", items.stream().map(ToolResult::json).toList());
        return new ToolResult(text, body, false);
    }

    /** An object built here (not an SDK type), given as it is. */
    static ToolResult structured(String text, Map<String, Object> structured) {
        return new ToolResult(text, structured, false);
    }

    /** The tool result of a failed call: the API's code and message, or what went wrong on the way. */
    static ToolResult failure(RuntimeException e) {
        var error = new LinkedHashMap<String, Object>();
        String text;
        switch (e) {
            case StasisApiException api -> {
                error.put("code", api.code());
                error.put("message", api.errorMessage());
                error.put("details", api.details());
                error.put("status", api.status());
                text = "error " + api.code() + ": " + api.errorMessage();
            }
            case StasisConnectionException down -> {
                error.put("code", "unreachable");
                error.put("message", down.getMessage());
                text = "error unreachable: the Stasis service did not answer: " + down.getMessage();
            }
            case InvalidArgumentsException invalid -> {
                error.put("code", "invalid_arguments");
                error.put("message", invalid.getMessage());
                text = "error invalid_arguments: " + invalid.getMessage();
            }
            default -> {
                error.put("code", "internal");
                error.put("message", String.valueOf(e.getMessage()));
                text = "error internal: " + e;
            }
        }
        return new ToolResult(text, Map.of("error", error), true);
    }

    CallToolResult toCallToolResult() {
        var result = CallToolResult.builder().content(List.of(new TextContent(text))).isError(error);
        if (structured != null) result.structuredContent(structured);
        return result.build();
    }

    /** An SDK wire object as the API's JSON, in plain maps and lists. */
    static Map<String, Object> json(Object wire) {
        try {
            return JSON.readValue(StasisJson.writeLine(wire), MAP);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }
}
