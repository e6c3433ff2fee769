package io.stasis.testkit;

/**
 * A shell loop, started in the background inside a sandbox, that counts in {@code /tmp/count} every 200 ms:
 * the witness that a sandbox's processes survived an operation and run on. At 50 ms the loops of a suite's
 * live sandboxes took most of a 2-core machine whose process starts are slow (a few ms each), and a window of
 * 500 ms still sees two counts. Each count starts one process ({@code mv}, forked by busybox without an exec):
 * the wait is the shell's own {@code read -t} on a FIFO the loop holds open for reading and writing, which
 * never has data nor an end, where {@code sleep} was a fork and an exec. A counting sandbox took 3.1% of a
 * core under runc and 31% under gVisor with {@code sleep}, 1.2% and 18% without; it holds across hibernation,
 * standby, pause and forks under both runtimes (CRIU and runsc save and restore the FIFO).
 */
public final class CounterLoop {
    /**
     * Each value is written aside and renamed into place: {@code > /tmp/count} truncates before it writes, and a
     * read (or a checkpoint) between the two found the file empty (CI: "its counter is gone" after a hibernate
     * froze the loop there).
     */
    public static final String SCRIPT =
            "(mkfifo /tmp/count.tick 2>/dev/null; exec 3<> /tmp/count.tick; i=0; while true; do i=$((i+1)); echo $i > /tmp/count.new;"
                    + " mv /tmp/count.new /tmp/count; read -t 0.2 tick <&3; done) >/dev/null 2>&1 &";

    private CounterLoop() {
    }
}
