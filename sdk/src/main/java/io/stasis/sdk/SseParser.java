package io.stasis.sdk;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/**
 * A push parser for {@code text/event-stream} (WHATWG HTML, "Server-sent events"). Bytes may be
 * fed in chunks split anywhere, even inside a UTF-8 sequence or between CR and LF: a line is
 * decoded only once it is complete. Lines end with LF, CR or CRLF. Comments ({@code :...}) and
 * unknown fields are ignored; {@code data:} lines accumulate with {@code \n} between them; a blank
 * line dispatches the event if it has data. At end of stream an unfinished event is dropped,
 * as the specification requires.
 */
final class SseParser {
    private final Consumer<SseEvent> sink;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
    private final StringBuilder data = new StringBuilder();
    private boolean skipNextLf;
    private boolean firstLine = true;
    private String eventType = "";
    private String lastEventId;

    SseParser(Consumer<SseEvent> sink) {
        this.sink = sink;
    }

    void feed(byte[] buffer, int offset, int length) {
        int end = offset + length;
        int i = offset;
        while (i < end) {
            if (skipNextLf) {
                skipNextLf = false;
                if (buffer[i] == '\n') { // second half of a CRLF, possibly in a later chunk
                    i++;
                    continue;
                }
            }
            int start = i;
            while (i < end && buffer[i] != '\r' && buffer[i] != '\n') i++;
            line.write(buffer, start, i - start); // a run at a time: per-byte writes cost a quarter of a stream's CPU
            if (i == end) return;
            skipNextLf = buffer[i++] == '\r';
            endLine();
        }
    }

    void feed(byte[] buffer) {
        feed(buffer, 0, buffer.length);
    }

    /** End of stream: whatever was not terminated by a blank line is discarded. */
    void finish() {
        line.reset();
        data.setLength(0);
        eventType = "";
    }

    private void endLine() {
        String text = line.toString(StandardCharsets.UTF_8);
        line.reset();
        if (firstLine) {
            firstLine = false;
            if (text.startsWith("\uFEFF")) text = text.substring(1);
        }
        if (text.isEmpty()) {
            dispatch();
            return;
        }
        if (text.charAt(0) == ':') return; // comment, often a keep-alive
        int colon = text.indexOf(':');
        String field = colon < 0 ? text : text.substring(0, colon);
        String value = colon < 0 ? "" : text.substring(colon + 1);
        if (value.startsWith(" ")) value = value.substring(1);
        switch (field) {
            case "event" -> eventType = value;
            case "data" -> data.append(value).append('\n');
            case "id" -> {
                if (value.indexOf('\0') < 0) lastEventId = value;
            }
            default -> {
                // "retry" and unknown fields do not concern a client that does not reconnect.
            }
        }
    }

    private void dispatch() {
        if (data.isEmpty()) {
            eventType = "";
            return;
        }
        data.setLength(data.length() - 1); // the \n after the last data line
        sink.accept(new SseEvent(eventType.isEmpty() ? "message" : eventType, data.toString(), lastEventId));
        data.setLength(0);
        eventType = "";
    }
}
