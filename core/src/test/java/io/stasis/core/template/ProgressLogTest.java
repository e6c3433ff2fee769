package io.stasis.core.template;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;
import org.slf4j.helpers.NOPLogger;

class ProgressLogTest {
    @Test
    void logsTheFirstReportAndThenOneEveryIntervalAtInfoTheRestAtDebug() {
        var now = new AtomicLong(0);
        var log = new ProgressLog(NOPLogger.NOP_LOGGER, "base", Duration.ofSeconds(5), now::get);
        var levels = new ArrayList<Level>();
        // A report every 100 ms for 12 s, as a bootstrap's package lines come.
        for (int i = 0; i <= 120; i++) {
            now.set(Duration.ofMillis(100L * i).toNanos());
            levels.add(log.report(i / 120.0, "Retrieving package " + i));
        }
        assertThat(levels.get(0)).isEqualTo(Level.INFO);
        assertThat(levels.stream().filter(l -> l == Level.INFO).count()).isEqualTo(3); // at 0 s, 5 s and 10 s
        assertThat(levels.get(50)).isEqualTo(Level.INFO);
        assertThat(levels.get(49)).isEqualTo(Level.DEBUG);
    }
}
