package io.stasis.core.exec;

import java.util.Arrays;
import java.util.function.Supplier;

/**
 * A piece of a process's output read once and passed to every follower that stands where it
 * starts, with a slot where the first follower to encode it leaves the encoding for the others:
 * a thousand followers of one process cost one read and, per wire format, one encoding.
 */
public final class SharedChunk {
    private final OutputKind kind;
    private final byte[] data;
    private final long stdoutStart;
    private final long stderrStart;
    /** Format, encoding, format, encoding...: a chunk has one or two, so a list beats a map. */
    private Object[] encodings = new Object[0];

    /**
     * @param stdoutStart the standard output's offset before this chunk
     * @param stderrStart the standard error's offset before this chunk
     */
    public SharedChunk(OutputKind kind, byte[] data, long stdoutStart, long stderrStart) {
        this.kind = kind;
        this.data = data;
        this.stdoutStart = stdoutStart;
        this.stderrStart = stderrStart;
    }

    public OutputKind kind() {
        return kind;
    }

    /** The bytes; shared by every follower, so never to be changed. */
    public byte[] data() {
        return data;
    }

    /** The offset of an output before this chunk. */
    public long start(OutputKind of) {
        return of == OutputKind.STDOUT ? stdoutStart : stderrStart;
    }

    public long offsetAfter() {
        return start(kind) + data.length;
    }

    /**
     * The chunk in one wire format: made by the first caller with that {@code format}, the same
     * object for every later one. Formats are compared with {@code equals}.
     */
    @SuppressWarnings("unchecked")
    public synchronized <T> T encoded(Object format, Supplier<T> encode) {
        for (int i = 0; i < encodings.length; i += 2)
            if (encodings[i].equals(format)) return (T) encodings[i + 1];
        T value = encode.get();
        var grown = Arrays.copyOf(encodings, encodings.length + 2);
        grown[encodings.length] = format;
        grown[encodings.length + 1] = value;
        encodings = grown;
        return value;
    }
}
