package io.stasis.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The data of a {@code stdout} / {@code stderr} event of an output stream,
 * {@code {"data", "offset", "encoding"?}}, decoded to the bytes the process wrote.
 *
 * @param bytes       what the process wrote (text re-encoded as UTF-8, base64 decoded)
 * @param offsetAfter the stream's byte offset after this chunk, as the service counts it
 */
record OutputEvent(byte[] bytes, long offsetAfter) {
    private static final ObjectMapper JSON = new ObjectMapper();

    static OutputEvent parse(String data) {
        JsonNode node;
        try {
            node = JSON.readTree(data);
        } catch (IOException e) {
            throw new UncheckedIOException("an output event that is not JSON: " + abbreviate(data), e);
        }
        String text = node.path("data").asText();
        byte[] bytes = "base64".equals(node.path("encoding").asText(null)) ? Base64.getDecoder().decode(text)
                : text.getBytes(StandardCharsets.UTF_8);
        return new OutputEvent(bytes, node.path("offset").asLong(-1));
    }

    /** The {@code exitCode} of an {@code exit} event's data ({@code {"exitCode", "signal", ...}}). */
    static int exitCode(String exitData) {
        try {
            return JSON.readTree(exitData).path("exitCode").asInt(-1);
        } catch (IOException e) {
            throw new UncheckedIOException("an exit event that is not JSON: " + abbreviate(exitData), e);
        }
    }

    /** The bytes as text (the benchmark's processes write ASCII). */
    String text() {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "...";
    }
}
