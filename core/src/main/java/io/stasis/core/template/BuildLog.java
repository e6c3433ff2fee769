package io.stasis.core.template;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * The output of one template build: every step's header and its command's stdout and stderr, in
 * the order they came. It keeps the last {@code capacity} bytes; offsets count from the build's
 * first byte, so a reader that follows with the offset it was given never sees a byte twice.
 * Thread-safe; readers may wait for more.
 */
public final class BuildLog {
    /** A piece of the log: its bytes start at {@code start}; {@code next} is where to read on; {@code done} once the build ended. */
    public record Slice(long start, byte[] data, long next, boolean done) {
    }

    private final byte[] ring;
    private long written;
    private boolean done;

    public BuildLog(int capacity) {
        this.ring = new byte[capacity];
    }

    public synchronized void append(byte[] data) {
        for (byte b : data) ring[(int) (written++ % ring.length)] = b;
        notifyAll();
    }

    public void line(String text) {
        append((text + "\n").getBytes(StandardCharsets.UTF_8));
    }

    public synchronized void finish() {
        done = true;
        notifyAll();
    }

    /** The log from {@code offset} (or from the oldest byte still kept), at most {@code maxBytes}. */
    public synchronized Slice read(long offset, int maxBytes) {
        long start = Math.max(Math.max(offset, 0), written - ring.length);
        start = Math.min(start, written);
        int length = (int) Math.min(maxBytes, written - start);
        byte[] out = new byte[length];
        for (int i = 0; i < length; i++) out[i] = ring[(int) ((start + i) % ring.length)];
        // A character cut by the end of the slice waits for the next read, so that text readers never see half of one.
        if (start + length < written || !done) length -= incompleteTail(out);
        if (length < out.length) out = Arrays.copyOf(out, length);
        return new Slice(start, out, start + length, done && start + length == written);
    }

    /** How many bytes at the end of {@code data} begin a UTF-8 sequence that is not complete in it. */
    static int incompleteTail(byte[] data) {
        for (int back = 1; back <= Math.min(3, data.length); back++) {
            int b = data[data.length - back] & 0xff;
            if ((b & 0xc0) == 0x80) continue; // a continuation byte: look further back for the lead
            int needed = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
            return needed > back ? back : 0;
        }
        return 0;
    }

    /** As {@link #read}, first waiting up to {@code wait} for bytes past {@code offset} or for the end. */
    public synchronized Slice await(long offset, int maxBytes, Duration wait) throws InterruptedException {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            var slice = read(offset, maxBytes);
            long left = deadline - System.nanoTime();
            if (slice.data().length > 0 || done || left <= 0) return slice;
            wait(Math.max(1, left / 1_000_000));
        }
    }

    /** The last {@code maxBytes} of the log as text, for an error report. */
    public synchronized String tail(int maxBytes) {
        var slice = read(written - maxBytes, maxBytes);
        return new String(Arrays.copyOf(slice.data(), slice.data().length), StandardCharsets.UTF_8);
    }
}
