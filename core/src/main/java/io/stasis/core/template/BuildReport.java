package io.stasis.core.template;

import java.time.Instant;
import java.util.Optional;

/**
 * Where a template's latest build stands.
 *
 * @param step        the step running (1-based) or, once ended, the last one reached; 0 before the first
 * @param steps       how many steps the build has
 * @param cachedSteps how many leading steps came from the cache instead of running
 * @param failure     why it failed, if it did
 */
public record BuildReport(String from, int step, int steps, int cachedSteps, Instant startedAt, Optional<Instant> endedAt,
                          Optional<Failure> failure) {

    /**
     * @param step     the failing step (1-based; 0 when the build failed outside a step)
     * @param exitCode its command's exit code, if it ran and exited
     * @param output   the tail of the build's output
     */
    public record Failure(int step, String instruction, Optional<Integer> exitCode, String message, String output) {
    }
}
