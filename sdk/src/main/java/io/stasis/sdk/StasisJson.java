package io.stasis.sdk;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * Writes the SDK's wire objects back as the API's JSON, for tools that print it (the CLI's
 * {@code --json}). Fields this SDK version does not know are not kept.
 *
 * <pre>{@code
 * System.out.println(StasisJson.write(sandbox));                  // the sandbox object
 * System.out.println(StasisJson.writeList(page.stream().toList())); // {"items": [...], "nextCursor": null}
 * }</pre>
 */
public final class StasisJson {
    private StasisJson() {
    }

    /** Pretty-printed JSON of a wire object ({@link Sandbox}, {@link FileInfo}, {@link ExecResult}, ...). */
    public static String write(Object value) {
        try {
            return Wire.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The JSON of a wire object on one line, for JSON Lines output (e.g. a followed event log). */
    public static String writeLine(Object value) {
        try {
            return Wire.MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A complete list in the API's list shape, with no next cursor. */
    public static String writeList(List<?> items) {
        return write(new Page.Body<>(items, null));
    }
}
