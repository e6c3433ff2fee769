package io.stasis.sdk;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Objects;

/**
 * What a background process wrote from the offsets asked for (at most 1 MiB of each stream per
 * read), and the offsets to read from next.
 *
 * <pre>{@code
 * long out = 0, err = 0;
 * while (true) {
 *     ProcessOutput o = process.output(out, err);
 *     System.out.write(o.stdoutBytes());
 *     if (o.stdoutOffset() == out && o.stderrOffset() == err) break;   // nothing new
 *     out = o.stdoutOffset();
 *     err = o.stderrOffset();
 * }
 * }</pre>
 *
 * @param stdoutBytes  stdout from {@code stdoutStart}
 * @param stdoutStart  where {@code stdoutBytes} start: the offset asked for, or later when older
 *                     output was dropped (each stream keeps its last 64 MiB by default)
 * @param stdoutOffset the stdout offset to read from next
 * @param stderrBytes  stderr from {@code stderrStart}
 * @param stderrStart  as {@code stdoutStart}, for stderr
 * @param stderrOffset the stderr offset to read from next
 * @param process      the process at the time of the read
 */
public record ProcessOutput(byte[] stdoutBytes, long stdoutStart, long stdoutOffset, byte[] stderrBytes,
                            long stderrStart, long stderrOffset, ProcessInfo process) {
    public ProcessOutput {
        stdoutBytes = stdoutBytes == null ? new byte[0] : stdoutBytes.clone();
        stderrBytes = stderrBytes == null ? new byte[0] : stderrBytes.clone();
    }

    static ProcessOutput from(ProcessWire.Output wire) {
        byte[] stdout = Utf8.decode(wire.stdout(), wire.encoding());
        byte[] stderr = Utf8.decode(wire.stderr(), wire.encoding());
        return new ProcessOutput(stdout, start(wire.stdoutStart(), wire.stdoutOffset(), stdout),
                wire.stdoutOffset(), stderr, start(wire.stderrStart(), wire.stderrOffset(), stderr),
                wire.stderrOffset(), wire.process());
    }

    /** The server's start, or where the bytes must have started (a server that never drops output). */
    private static long start(Long start, long next, byte[] bytes) {
        return start != null ? start : next - bytes.length;
    }

    /** Stdout decoded as UTF-8 (invalid bytes become U+FFFD). */
    public String stdout() {
        return new String(stdoutBytes, StandardCharsets.UTF_8);
    }

    /** Stderr decoded as UTF-8 (invalid bytes become U+FFFD). */
    public String stderr() {
        return new String(stderrBytes, StandardCharsets.UTF_8);
    }

    @Override
    public byte[] stdoutBytes() {
        return stdoutBytes.clone();
    }

    @Override
    public byte[] stderrBytes() {
        return stderrBytes.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ProcessOutput p && Arrays.equals(stdoutBytes, p.stdoutBytes) && stdoutStart == p.stdoutStart
                && stdoutOffset == p.stdoutOffset && Arrays.equals(stderrBytes, p.stderrBytes)
                && stderrStart == p.stderrStart && stderrOffset == p.stderrOffset && Objects.equals(process, p.process);
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(stdoutBytes), stdoutStart, stdoutOffset, Arrays.hashCode(stderrBytes),
                stderrStart, stderrOffset, process);
    }

    @Override
    public String toString() {
        return "ProcessOutput[stdout " + stdoutStart + ".." + stdoutOffset + ", stderr " + stderrStart + ".."
                + stderrOffset + "]";
    }
}
