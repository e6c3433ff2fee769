package io.stasis.runtime.runc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * What tells, after the fact, how one gVisor save ended: written to the image's work directory
 * before the save is asked for. The sentry's log, as a hard link (which outlives the sandbox's log
 * directory: the reconciler destroys what is left of a sandbox before it asks), and the log's size
 * then: the first outcome the sentry logs past that size is this save's.
 *
 * @param log    the sentry's log as this save reads it
 * @param offset the log's size before the save was asked for
 */
record SaveRecord(Path log, long offset) {
    private static final String LOG = "sentry.log";
    private static final String OFFSET = "sentry-log-offset";

    /** Records, in the fresh {@code workDir}, where the sentry's log {@code sentryLog} stands now. */
    static SaveRecord start(Path workDir, Path sentryLog) {
        try {
            long offset = Files.exists(sentryLog) ? Files.size(sentryLog) : 0;
            Path log = workDir.resolve(LOG);
            try {
                Files.createLink(log, sentryLog);
            } catch (IOException e) {
                // No log (a sandbox booted by an earlier version), or another filesystem: only this run reads it then.
                log = sentryLog;
            }
            Files.writeString(workDir.resolve(OFFSET), Long.toString(offset));
            return new SaveRecord(log, offset);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The record a save left in {@code workDir}, if it got that far. */
    static Optional<SaveRecord> read(Path workDir) {
        try {
            return Optional.of(new SaveRecord(workDir.resolve(LOG), Long.parseLong(Files.readString(workDir.resolve(OFFSET)).strip())));
        } catch (NoSuchFileException | NumberFormatException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Runsc.SaveOutcome outcome() {
        return Runsc.saveOutcome(log, offset);
    }
}
