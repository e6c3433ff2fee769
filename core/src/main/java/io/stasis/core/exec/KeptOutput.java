package io.stasis.core.exec;

import io.stasis.core.spi.ExecHandle;
import java.util.Arrays;

/**
 * Reads a process's output without mistaking dropped bytes (see {@link ExecHandle#dropBefore}) for
 * output. The start is checked after the read: a drop that lands between the two is seen, and the
 * zeros it left are not passed on.
 */
public final class KeptOutput {
    private KeptOutput() {
    }

    /**
     * @param start where {@code data} begins: {@code offset}, or later when the output before it was dropped
     */
    public record Slice(long start, byte[] data) {
    }

    public static Slice read(ExecHandle handle, OutputKind kind, long offset, int maxBytes) {
        long at = offset;
        while (true) {
            byte[] data = handle.read(kind, at, maxBytes);
            long kept = data.length == 0 ? at : handle.keptFrom(kind); // nothing read: at is past the end, so past any drop
            if (kept <= at) return new Slice(at, data);
            if (kept < at + data.length) return new Slice(kept, Arrays.copyOfRange(data, (int) (kept - at), data.length));
            at = kept;
        }
    }
}
