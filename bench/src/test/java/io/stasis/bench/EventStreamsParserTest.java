package io.stasis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventStreamsParserTest {
    private record Seen(String type, String data, long received) {
    }

    private final List<Seen> seen = new ArrayList<>();
    private final EventStreams.Parser parser = new EventStreams.Parser((type, data, received) -> seen.add(new Seen(type, data, received)));

    private void feed(String text, long received) {
        parser.feed(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)), received);
    }

    @Test
    void eventsAsTheServiceWritesThem() {
        feed("event: ready\ndata: {}\n\nevent: stdout\nid: 3,0\ndata: {\"data\":\"hi\\n\",\"offset\":3}\n\n", 7);
        assertThat(seen).containsExactly(new Seen("ready", "{}", 7), new Seen("stdout", "{\"data\":\"hi\\n\",\"offset\":3}", 7));
    }

    @Test
    void bytesSplitAnywhereEvenInsideACharacter() {
        byte[] all = "event: stdout\r\ndata: caf\u00e9\r\n\r\n".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < all.length; i++) parser.feed(ByteBuffer.wrap(all, i, 1), i);
        // The event is dispatched with the arrival of the bytes that completed it: the last one.
        assertThat(seen).containsExactly(new Seen("stdout", "caf\u00e9", all.length - 1));
    }

    @Test
    void commentsAndUnknownFieldsAreSkippedAndDataLinesJoined() {
        feed(": ping\n\nretry: 10\nevent: exit\ndata: a\ndata: b\n\ndata: plain\n\n", 1);
        assertThat(seen).containsExactly(new Seen("exit", "a\nb", 1), new Seen("message", "plain", 1));
    }

    @Test
    void aLargeEventSurvivesManyBuffers() {
        String big = "x".repeat(300_000);
        String text = "event: stdout\ndata: " + big + "\n\n";
        for (int at = 0; at < text.length(); at += 16_384) feed(text.substring(at, Math.min(text.length(), at + 16_384)), at);
        assertThat(seen).hasSize(1);
        assertThat(seen.getFirst().data()).isEqualTo(big);
    }
}
