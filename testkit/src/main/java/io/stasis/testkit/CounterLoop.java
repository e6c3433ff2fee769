package io.stasis.testkit;

/**
 * A shell loop, started in the background inside a sandbox, that counts in {@code /tmp/count} every 200 ms:
 * the witness that a sandbox's processes survived an operation and run on. Each count starts two processes
 * ({@code mv}, {@code sleep}); at 50 ms the loops of a suite's live sandboxes took most of a 2-core machine
 * whose process starts are slow (a few ms each), and a window of 500 ms still sees two counts.
 */
public final class CounterLoop {
    /**
     * Each value is written aside and renamed into place: {@code > /tmp/count} truncates before it writes, and a
     * read (or a checkpoint) between the two found the file empty (CI: "its counter is gone" after a hibernate
     * froze the loop there).
     */
    public static final String SCRIPT =
            "(i=0; while true; do i=$((i+1)); echo $i > /tmp/count.new; mv /tmp/count.new /tmp/count; sleep 0.2; done) >/dev/null 2>&1 &";

    private CounterLoop() {
    }
}
