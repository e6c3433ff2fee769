package io.stasis.fs.linux;

import io.stasis.core.files.FileEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * A watch listener that keeps what it is given, and lets a test wait, with a deadline, until
 * what it expects has arrived. Events are kept as short strings: {@code "create /a/f file"},
 * {@code "move /b from /a dir"}.
 */
final class EventRecorder implements Consumer<List<FileEvent>> {
    static final Duration DEADLINE = Duration.ofSeconds(20);

    private final List<String> events = new ArrayList<>();
    private final Set<Thread> threads = new HashSet<>();
    private int batches;
    private boolean endSignalled;

    @Override
    public synchronized void accept(List<FileEvent> batch) {
        threads.add(Thread.currentThread());
        if (batch.isEmpty()) endSignalled = true;
        else batches++;
        for (FileEvent e : batch) events.add(describe(e));
        notifyAll();
    }

    static String describe(FileEvent e) {
        return e.kind().wireName() + " " + e.path() + e.from().map(f -> " from " + f).orElse("") + " " + e.type().wireName();
    }

    synchronized List<String> events() {
        return List.copyOf(events);
    }

    synchronized int batches() {
        return batches;
    }

    synchronized Set<Thread> threads() {
        return Set.copyOf(threads);
    }

    synchronized boolean endSignalled() {
        return endSignalled;
    }

    /** Waits until {@code event} (as {@link #describe} writes it) has arrived; returns all events so far. */
    List<String> await(String event) {
        return awaitUntil("event '" + event + "'", all -> all.contains(event));
    }

    /** Waits until the events so far satisfy {@code condition}; returns them. */
    synchronized List<String> awaitUntil(String what, Predicate<List<String>> condition) {
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (!condition.test(events)) {
            long left = end - System.nanoTime();
            if (left <= 0) throw new AssertionError("timed out after " + DEADLINE.toSeconds() + " s waiting for " + what + "; got " + summary());
            waitNanos(left);
        }
        return List.copyOf(events);
    }

    /** Waits for the empty batch that tells a watch ended on its own. */
    synchronized void awaitEnd() {
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (!endSignalled) {
            long left = end - System.nanoTime();
            if (left <= 0) throw new AssertionError("the watch did not end within " + DEADLINE.toSeconds() + " s; got " + summary());
            waitNanos(left);
        }
    }

    /** The events so far, the middle left out when there are many. */
    private String summary() {
        if (events.size() <= 40) return events.toString();
        return events.size() + " events: " + events.subList(0, 20) + " ... " + events.subList(events.size() - 20, events.size());
    }

    private void waitNanos(long nanos) {
        try {
            wait(Math.max(1, nanos / 1_000_000));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", e);
        }
    }
}
