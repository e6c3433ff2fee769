package io.stasis.server.http;

import io.javalin.http.Context;
import io.stasis.core.exec.ExecListener;
import io.stasis.core.exec.OutputKind;
import io.stasis.core.exec.SharedChunk;
import io.stasis.server.http.Views.DroppedEvent;
import io.stasis.server.http.Views.OutputEvent;
import java.util.EnumMap;
import java.util.Map;

/**
 * A process's output as Server-Sent Events: {@code stdout} and {@code stderr} events carrying text
 * cut on UTF-8 character boundaries (base64 where the bytes are not text or base64 was asked for)
 * and the stream's byte offset after the chunk. Each event's {@code id} is
 * {@code <stdout offset>,<stderr offset>}, what a client sends back as {@code Last-Event-ID} to go on
 * where it was. The response (and its 200) begins with the first event, so that errors before it
 * are still plain JSON errors.
 */
final class SseOutput implements ExecListener, AutoCloseable {
    /** Marks a chunk whose event each stream makes itself. */
    private static final byte[] UNSHARED = new byte[0];

    private final Context ctx;
    private final Encodings encoding;
    private final Map<OutputKind, Utf8Chunker> chunkers = new EnumMap<>(OutputKind.class);
    private final Map<OutputKind, Long> offsets = new EnumMap<>(OutputKind.class);
    private SseStream sse;

    SseOutput(Context ctx, Encodings encoding, long stdoutOffset, long stderrOffset) {
        this.ctx = ctx;
        this.encoding = encoding;
        offsets.put(OutputKind.STDOUT, stdoutOffset);
        offsets.put(OutputKind.STDERR, stderrOffset);
    }

    @Override
    public void output(OutputKind kind, byte[] data, long offsetAfter) {
        byte[] ready = encoding == Encodings.BASE64 ? data : chunkers.computeIfAbsent(kind, k -> new Utf8Chunker()).push(data);
        if (ready.length > 0) send(kind, ready);
    }

    /**
     * A chunk every follower of the process gets: when this stream stands where it starts, holding
     * nothing back, the event is the same for all of them and is made once.
     */
    @Override
    public void shared(SharedChunk chunk) {
        var kind = chunk.kind();
        var chunker = chunkers.get(kind);
        boolean aligned = (chunker == null || chunker.isEmpty()) && offsets.get(OutputKind.STDOUT) == chunk.start(OutputKind.STDOUT)
                && offsets.get(OutputKind.STDERR) == chunk.start(OutputKind.STDERR);
        byte[] frame = aligned ? chunk.encoded(encoding, () -> sharedFrame(chunk)) : UNSHARED;
        if (frame == UNSHARED) {
            output(kind, chunk.data(), chunk.offsetAfter());
            return;
        }
        offsets.put(kind, chunk.offsetAfter());
        stream().send(frame);
    }

    /** The event for a chunk passed on whole, or {@link #UNSHARED} when it ends inside a character (held back by each stream). */
    private byte[] sharedFrame(SharedChunk chunk) {
        byte[] data = chunk.data();
        if (encoding == Encodings.UTF8 && Utf8Chunker.completeLength(data) != data.length) return UNSHARED;
        var kind = chunk.kind();
        long stdout = kind == OutputKind.STDOUT ? chunk.offsetAfter() : chunk.start(OutputKind.STDOUT);
        long stderr = kind == OutputKind.STDERR ? chunk.offsetAfter() : chunk.start(OutputKind.STDERR);
        return frame(kind, data, stdout, stderr);
    }

    /** The client asked from an offset whose output was dropped: a {@code dropped} event, and on from where it is kept. */
    @Override
    public void dropped(OutputKind kind, long from, long to) {
        var chunker = chunkers.remove(kind); // a character cut by the drop is lost with it
        if (chunker != null) chunker.flush();
        offsets.put(kind, to);
        stream().event("dropped", resumeId(), new DroppedEvent(kind.wireName(), from, to));
    }

    @Override
    public boolean gone() {
        return sse != null && sse.clientGone();
    }

    /** Sends what was held back waiting for the rest of a character. */
    void flush() {
        for (var entry : chunkers.entrySet()) {
            byte[] rest = entry.getValue().flush();
            if (rest.length > 0) send(entry.getKey(), rest);
        }
    }

    /** Sends the 200 and the headers now, so that a client sees the stream open before any output comes. */
    void begin() {
        stream();
    }

    void event(String name, Object data) {
        stream().event(name, resumeId(), data);
    }

    private void send(OutputKind kind, byte[] bytes) {
        offsets.merge(kind, (long) bytes.length, Long::sum);
        stream().send(frame(kind, bytes, offsets.get(OutputKind.STDOUT), offsets.get(OutputKind.STDERR)));
    }

    /** The event carrying {@code bytes} of an output, given both offsets after it. */
    private byte[] frame(OutputKind kind, byte[] bytes, long stdoutAfter, long stderrAfter) {
        boolean text = encoding == Encodings.UTF8 && Encodings.isValidUtf8(bytes);
        Encodings used = text ? Encodings.UTF8 : Encodings.BASE64;
        long after = kind == OutputKind.STDOUT ? stdoutAfter : stderrAfter;
        return SseStream.frame(kind.wireName(), stdoutAfter + "," + stderrAfter, new OutputEvent(used.encode(bytes), after, text ? null : "base64"));
    }

    private String resumeId() {
        return offsets.get(OutputKind.STDOUT) + "," + offsets.get(OutputKind.STDERR);
    }

    private SseStream stream() {
        if (sse == null) sse = SseStream.open(ctx);
        return sse;
    }

    @Override
    public void close() {
        if (sse != null) sse.close();
    }
}
