package io.stasis.runtime.runc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How a gVisor save ended, read from the sentry's log past where it stood when the save was asked for. */
class SaveRecordTest {
    private static final String STARTED = "I1205 20:25:10.910534   20997 state.go:79] Sandbox save started, pausing all tasks.\n";
    private static final String SUCCEEDED = "I1205 20:25:10.964787   20997 state.go:89] Save succeeded: exiting...\n";
    private static final String FAILED = "W1205 20:25:10.964787   20997 state.go:91] Save failed: no space left on device\n";

    @TempDir
    Path dir;

    @Test
    void theOutcomeIsTheFirstOnePastTheRecordedSizeAndSurvivesTheLogsRemoval() throws Exception {
        Path sentryLog = Files.writeString(dir.resolve("debug-boot.log"), STARTED + SUCCEEDED); // an earlier save
        Path work = Files.createDirectory(dir.resolve("work"));
        var save = SaveRecord.start(work, sentryLog);
        assertThat(save.outcome()).isEqualTo(Runsc.SaveOutcome.NOT_SAID);
        Files.writeString(sentryLog, STARTED + FAILED + STARTED + SUCCEEDED, StandardOpenOption.APPEND);
        assertThat(save.outcome()).isEqualTo(Runsc.SaveOutcome.FAILED);
        Files.delete(sentryLog); // the sandbox's log directory, removed with what is left of it
        assertThat(SaveRecord.read(work)).hasValueSatisfying(read -> assertThat(read.outcome()).isEqualTo(Runsc.SaveOutcome.FAILED));
    }

    @Test
    void aSaveThatEndedWellSaysSoAndNoRecordOrNoLogSaysNothing() throws Exception {
        Path sentryLog = Files.writeString(dir.resolve("debug-boot.log"), "");
        Path work = Files.createDirectory(dir.resolve("work"));
        var save = SaveRecord.start(work, sentryLog);
        Files.writeString(sentryLog, STARTED + SUCCEEDED, StandardOpenOption.APPEND);
        assertThat(SaveRecord.read(work).orElseThrow().outcome()).isEqualTo(Runsc.SaveOutcome.SUCCEEDED);
        assertThat(SaveRecord.read(dir.resolve("absent"))).isEmpty();
        Path older = Files.createDirectory(dir.resolve("older"));
        assertThat(SaveRecord.start(older, dir.resolve("no-log-yet.log")).outcome()).isEqualTo(Runsc.SaveOutcome.NOT_SAID);
        assertThat(save.offset()).isZero();
    }
}
