package io.stasis.core.exec;

import java.time.Duration;

/**
 * The outcome of a run-and-wait command.
 *
 * @param exit      how it ended
 * @param stdout    standard output, at most the configured limit
 * @param stderr    standard error, at most the configured limit
 * @param stdoutTruncated whether output past the limit was left out
 * @param stderrTruncated whether output past the limit was left out
 * @param timedOut  whether the timeout killed it
 * @param duration  from start to exit
 */
public record ExecResult(ExitStatus exit, byte[] stdout, byte[] stderr,
                         boolean stdoutTruncated, boolean stderrTruncated, boolean timedOut, Duration duration) {
}
