package io.stasis.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** busybox adjtimex's clock read back as delays, in the kernel's microsecond and nanosecond modes. */
class ClockLinesTest {

    private static String block(int status, long seconds, long fraction) {
        return "    mode:         0\n    status:       " + status + " (UNSYNC)\n-t  tick:         10000 us\n"
                + "    time.tv_sec:  " + seconds + "\n    time.tv_usec: " + fraction + "\n    return value: 5 (clock not synchronized)\n";
    }

    @Test
    void microsecondsAreReadAsSuch() throws Exception {
        var clock = new OutputLatency.ClockLines(0, 1);
        // the first event only marks where counting starts: lines written before it are the backlog
        clock.take("", Instant.ofEpochSecond(1000, 0));
        clock.take(block(64, 1000, 250_000), Instant.ofEpochSecond(1000, 253_000_000));
        assertThat(clock.done.get()).containsExactly(3.0);
    }

    @Test
    void inNanosecondModeTvUsecHoldsNanoseconds() throws Exception {
        var clock = new OutputLatency.ClockLines(0, 1);
        clock.take("", Instant.ofEpochSecond(1000, 0));
        clock.take(block(8256, 1000, 821_934_838), Instant.ofEpochSecond(1000, 823_934_838));
        assertThat(clock.done.get()).containsExactly(2.0);
    }
}
