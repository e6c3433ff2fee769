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

    /** The delay ClockLines reads from one adjtimex block that arrived at {@code arrivedNanos} past second 1000. */
    private static double delay(int status, long fraction, long arrivedNanos) throws Exception {
        var clock = new OutputLatency.ClockLines(0, 1);
        // the first event only marks where counting starts: lines written before it are the backlog
        clock.take("", Instant.ofEpochSecond(1000, 0));
        clock.take(block(status, 1000, fraction), Instant.ofEpochSecond(1000, arrivedNanos));
        return clock.done.get()[0];
    }

    @Test
    void microsecondsAreReadAsSuch() throws Exception {
        assertThat(delay(64, 250_000, 253_000_000)).isEqualTo(3.0);
    }

    @Test
    void inNanosecondModeTvUsecHoldsNanoseconds() throws Exception {
        assertThat(delay(8256, 821_934_838, 823_934_838)).isEqualTo(2.0);
    }
}
