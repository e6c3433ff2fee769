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
 * @param stdoutBytes  stdout from the asked offset
 * @param stdoutOffset the stdout offset to read from next
 * @param stderrBytes  stderr from the asked offset
 * @param stderrOffset the stderr offset to read from next
 * @param process      the process at the time of the read
 */
public record ProcessOutput(byte[] stdoutBytes, long stdoutOffset, byte[] stderrBytes, long stderrOffset,
                            ProcessInfo process) {
    public ProcessOutput {
        stdoutBytes = stdoutBytes == null ? new byte[0] : stdoutBytes.clone();
        stderrBytes = stderrBytes == null ? new byte[0] : stderrBytes.clone();
    }

    static ProcessOutput from(ProcessWire.Output wire) {
        return new ProcessOutput(Utf8.decode(wire.stdout(), wire.encoding()), wire.stdoutOffset(),
                Utf8.decode(wire.stderr(), wire.encoding()), wire.stderrOffset(), wire.process());
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
        return o instanceof ProcessOutput p && Arrays.equals(stdoutBytes, p.stdoutBytes) && stdoutOffset == p.stdoutOffset
                && Arrays.equals(stderrBytes, p.stderrBytes) && stderrOffset == p.stderrOffset
                && Objects.equals(process, p.process);
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(stdoutBytes), stdoutOffset, Arrays.hashCode(stderrBytes), stderrOffset, process);
    }

    @Override
    public String toString() {
        return "ProcessOutput[stdout=" + stdoutBytes.length + " bytes to " + stdoutOffset + ", stderr="
                + stderrBytes.length + " bytes to " + stderrOffset + "]";
    }
}
