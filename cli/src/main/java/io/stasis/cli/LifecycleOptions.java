package io.stasis.cli;

import io.stasis.sdk.LifecycleUpdate;
import java.time.Duration;
import java.util.function.Consumer;
import picocli.CommandLine.Option;

/**
 * The idle-policy options shared by {@code create} and {@code lifecycle}. Only the options given
 * are sent; the others keep their value (the server's default on create).
 */
final class LifecycleOptions {
    private static final String VALUE = "D|never";

    @Option(names = "--pause-after", paramLabel = VALUE, converter = DurationOrNever.Converter.class,
            description = "Pause after this long idle (e.g. 30s, 5m), or never.")
    DurationOrNever pauseAfter;

    @Option(names = "--standby-after", paramLabel = VALUE, converter = DurationOrNever.Converter.class,
            description = "Go to standby (memory given back to the host) after this long idle, or never.")
    DurationOrNever standbyAfter;

    @Option(names = "--hibernate-after", paramLabel = VALUE, converter = DurationOrNever.Converter.class,
            description = "Hibernate after this long idle, or never.")
    DurationOrNever hibernateAfter;

    @Option(names = "--stop-after", paramLabel = VALUE, converter = DurationOrNever.Converter.class,
            description = "Stop after this long idle, or never.")
    DurationOrNever stopAfter;

    @Option(names = "--delete-after", paramLabel = VALUE, converter = DurationOrNever.Converter.class,
            description = "Delete after this long idle (e.g. 30d), or never.")
    DurationOrNever deleteAfter;

    @Option(names = "--max-age", paramLabel = VALUE, converter = DurationOrNever.Converter.class,
            description = "At this age, busy or not, do what --at-max-age says (delete unless set), or never.")
    DurationOrNever maxAge;

    @Option(names = "--at-max-age", paramLabel = "delete|stop|hibernate|standby|pause",
            description = "What --max-age does: delete, or put the sandbox to sleep.")
    String atMaxAge;

    @Option(names = "--wake-for", paramLabel = VALUE, converter = DurationOrNever.Converter.class,
            description = "When a sandbox its age put to sleep wakes, its max age moves this far past its age then; never: the limit goes.")
    DurationOrNever wakeFor;

    @Option(names = "--auto-resume", arity = "1", paramLabel = "true|false",
            description = "Whether exec and file calls wake a paused, standby or hibernated sandbox.")
    Boolean autoResume;

    /** The options given, as an update; empty when none was. */
    LifecycleUpdate toUpdate() {
        var update = LifecycleUpdate.builder();
        set("--pause-after", pauseAfter, update::pauseAfterIdle);
        set("--standby-after", standbyAfter, update::standbyAfterIdle);
        set("--hibernate-after", hibernateAfter, update::hibernateAfterIdle);
        set("--stop-after", stopAfter, update::stopAfterIdle);
        set("--delete-after", deleteAfter, update::deleteAfterIdle);
        set("--max-age", maxAge, update::maxAge);
        if (atMaxAge != null) update.atMaxAge(atMaxAge);
        set("--wake-for", wakeFor, update::wakeFor);
        if (autoResume != null) update.autoResume(autoResume);
        return update.build();
    }

    /** Names the option when the SDK refuses a value the parser let through (e.g. more than 9 digits of a unit). */
    private static void set(String option, DurationOrNever value, Consumer<Duration> setter) {
        if (value == null) return;
        try {
            setter.accept(value.duration());
        } catch (IllegalArgumentException e) {
            String why = e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
            throw new UsageException(option + ": " + why);
        }
    }
}
