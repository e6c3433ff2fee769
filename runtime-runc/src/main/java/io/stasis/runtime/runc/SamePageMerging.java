package io.stasis.runtime.runc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kernel's same-page merging daemon (ksmd, {@code /sys/kernel/mm/ksm/run}), which merges the
 * identical anonymous pages of the processes marked for it ({@code stasis-criu} marks those CRIU
 * restores). Turned on while the service shares forks' pages; turned off again at its stop if it
 * was off before (pages merged meanwhile stay merged until written).
 */
final class SamePageMerging implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SamePageMerging.class);
    private static final Path RUN = Path.of("/sys/kernel/mm/ksm/run");

    private final boolean turnedOn;

    private SamePageMerging(boolean turnedOn) {
        this.turnedOn = turnedOn;
    }

    /** @throws IllegalStateException when the kernel has no KSM */
    static SamePageMerging start() {
        if (!Files.exists(RUN))
            throw new IllegalStateException("the kernel has no same-page merging (" + RUN + " is missing): forks' pages cannot be shared");
        try {
            if (!Files.readString(RUN).strip().equals("0")) return new SamePageMerging(false);
            Files.writeString(RUN, "1");
            log.atInfo().addKeyValue("switch", RUN).log("same-page merging turned on for forks' pages");
            return new SamePageMerging(true);
        } catch (IOException e) {
            throw new UncheckedIOException("turning on same-page merging at " + RUN, e);
        }
    }

    @Override
    public void close() {
        if (!turnedOn) return;
        try {
            Files.writeString(RUN, "0");
        } catch (IOException e) {
            log.atWarn().setCause(e).addKeyValue("switch", RUN).log("could not turn same-page merging off again");
        }
    }
}
