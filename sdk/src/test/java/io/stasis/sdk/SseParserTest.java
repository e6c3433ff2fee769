package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SseParserTest {
    private static List<SseEvent> parse(String text) {
        return parseChunks(text.getBytes(StandardCharsets.UTF_8), new int[0]);
    }

    /** Feeds {@code bytes} split at the given positions. */
    private static List<SseEvent> parseChunks(byte[] bytes, int[] splits) {
        var events = new ArrayList<SseEvent>();
        var parser = new SseParser(events::add);
        int start = 0;
        for (int split : splits) {
            parser.feed(bytes, start, split - start);
            start = split;
        }
        parser.feed(bytes, start, bytes.length - start);
        parser.finish();
        return events;
    }

    @Test
    void dispatchesEventsOnBlankLines() {
        assertThat(parse("event: stdout\ndata: {\"data\":\"a\"}\n\nevent: exit\ndata: {}\n\n")).containsExactly(
                new SseEvent("stdout", "{\"data\":\"a\"}", null),
                new SseEvent("exit", "{}", null));
    }

    @Test
    void joinsMultiLineDataWithNewlines() {
        assertThat(parse("data: one\ndata:two\ndata:  three\ndata\n\n"))
                .containsExactly(new SseEvent("message", "one\ntwo\n three\n", null));
    }

    @Test
    void ignoresCommentsAndUnknownFields() {
        assertThat(parse(": keep-alive\n:\nretry: 10\nfoo: bar\nevent: x\n: inside\ndata: d\n\n"))
                .containsExactly(new SseEvent("x", "d", null));
    }

    @Test
    void anEventWithoutDataIsNotDispatchedAndResetsTheType() {
        assertThat(parse("event: lonely\n\ndata: after\n\n")).containsExactly(new SseEvent("message", "after", null));
    }

    @Test
    void emptyDataLineStillDispatches() {
        assertThat(parse("event: e\ndata:\n\n")).containsExactly(new SseEvent("e", "", null));
    }

    @Test
    void handlesCrLfAndBareCr() {
        assertThat(parse("event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n")).containsExactly(
                new SseEvent("a", "1", null), new SseEvent("b", "2", null), new SseEvent("message", "3", null));
    }

    @Test
    void keepsTheLastEventId() {
        assertThat(parse("id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n")).containsExactly(
                new SseEvent("message", "a", "7"), new SseEvent("message", "b", "7"),
                new SseEvent("message", "c", ""));
    }

    @Test
    void dropsAnUnfinishedEventAtEndOfStream() {
        assertThat(parse("data: done\n\ndata: partial\n")).containsExactly(new SseEvent("message", "done", null));
        assertThat(parse("data: no newline at all")).isEmpty();
    }

    @Test
    void stripsALeadingByteOrderMark() {
        assertThat(parse("\uFEFFevent: x\ndata: y\n\n")).containsExactly(new SseEvent("x", "y", null));
    }

    @Test
    void onlyOneSpaceAfterTheColonIsRemoved() {
        assertThat(parse("data:   spaced\n\n")).containsExactly(new SseEvent("message", "  spaced", null));
    }

    @Test
    void chunkBoundariesAnywhereGiveTheSameEvents() {
        String text = "\uFEFF: hello\r\nevent: stdout\r\ndata: {\"data\":\"h\u00e9llo \u20ac \uD83D\uDE00\"}\r\n\r\n"
                + "id: 1\rdata: a\rdata: b\r\r"
                + "event: exit\ndata: {\"exitCode\":0}\n\n";
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        List<SseEvent> whole = parseChunks(bytes, new int[0]);
        assertThat(whole).hasSize(3);
        assertThat(whole.getFirst().data()).contains("h\u00e9llo \u20ac \uD83D\uDE00");
        for (int split = 1; split < bytes.length; split++) {
            assertThat(parseChunks(bytes, new int[] {split})).as("split at %d", split).isEqualTo(whole);
        }
        for (int a = 1; a < bytes.length; a += 3) {
            for (int b = a + 1; b < bytes.length; b += 5) {
                assertThat(parseChunks(bytes, new int[] {a, b})).as("splits at %d, %d", a, b).isEqualTo(whole);
            }
        }
        int[] everyByte = new int[bytes.length - 1];
        for (int i = 0; i < everyByte.length; i++) everyByte[i] = i + 1;
        assertThat(parseChunks(bytes, everyByte)).isEqualTo(whole);
    }
}
