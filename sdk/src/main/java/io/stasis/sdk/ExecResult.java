package io.stasis.sdk;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * How a command ended, and its output.
 *
 * <pre>{@code
 * ExecResult r = sandbox.exec("sh", "-c", "echo hi; exit 3");
 * r.exitCode();   // 3
 * r.stdout();     // "hi\n"
 * }</pre>
 *
 * @param exitCode        the exit status; 128+N when signal N killed it, 127 when the program
 *                        was not found, 126 when it could not be executed
 * @param signal          the name of the killing signal (e.g. {@code "KILL"}), or null
 * @param stdoutBytes     standard output (its first 16 MiB by default)
 * @param stderrBytes     standard error (its first 16 MiB by default)
 * @param stdoutTruncated whether stdout was cut at the limit
 * @param stderrTruncated whether stderr was cut at the limit
 * @param timedOut        whether the command was killed at its timeout
 * @param duration        how long it ran
 */
public record ExecResult(int exitCode, String signal, byte[] stdoutBytes, byte[] stderrBytes,
                         boolean stdoutTruncated, boolean stderrTruncated, boolean timedOut, Duration duration) {
    public ExecResult {
        stdoutBytes = stdoutBytes == null ? new byte[0] : stdoutBytes.clone();
        stderrBytes = stderrBytes == null ? new byte[0] : stderrBytes.clone();
        duration = duration == null ? Duration.ZERO : duration;
    }

    /** Standard output decoded as UTF-8 (invalid bytes become U+FFFD). */
    public String stdout() {
        return new String(stdoutBytes, StandardCharsets.UTF_8);
    }

    /** Standard error decoded as UTF-8 (invalid bytes become U+FFFD). */
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

    /** Exit code 0 and no timeout. */
    public boolean succeeded() {
        return exitCode == 0 && !timedOut;
    }

    static ExecResult from(ExecWire.Response r) {
        return new ExecResult(r.exitCode(), r.signal(), Utf8.decode(r.stdout(), r.encoding()),
                Utf8.decode(r.stderr(), r.encoding()), r.stdoutTruncated(), r.stderrTruncated(), r.timedOut(),
                Duration.ofMillis(r.durationMs()));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ExecResult r && exitCode == r.exitCode && Objects.equals(signal, r.signal)
                && Arrays.equals(stdoutBytes, r.stdoutBytes) && Arrays.equals(stderrBytes, r.stderrBytes)
                && stdoutTruncated == r.stdoutTruncated && stderrTruncated == r.stderrTruncated
                && timedOut == r.timedOut && duration.equals(r.duration);
    }

    @Override
    public int hashCode() {
        return Objects.hash(exitCode, signal, Arrays.hashCode(stdoutBytes), Arrays.hashCode(stderrBytes),
                stdoutTruncated, stderrTruncated, timedOut, duration);
    }

    @Override
    public String toString() {
        return "ExecResult[exitCode=" + exitCode + ", signal=" + signal + ", stdout=" + stdoutBytes.length
                + " bytes, stderr=" + stderrBytes.length + " bytes, timedOut=" + timedOut + ", duration="
                + duration + "]";
    }
}
