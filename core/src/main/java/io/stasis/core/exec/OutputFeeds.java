package io.stasis.core.exec;

import io.stasis.core.spi.ExecHandle;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Followers of a process's output share one reader: a feed, started by the first follower and
 * ended with the process or after its last follower left, reads each new piece of output once
 * and hands the same {@link SharedChunk} to every follower. A follower first reads what came
 * before on its own (from the offset it asked for), then takes the feed's chunks that start where
 * it stands and reads on its own again whenever it is not there (it started behind the feed,
 * fell more than {@value #MAX_QUEUED} chunks behind, or output was dropped), so that each one gets
 * every byte once and in order, however it joined.
 */
public final class OutputFeeds {
    /** How far a follower may fall behind the feed before it is told to read on its own. */
    static final int MAX_QUEUED = 1024;
    /** How often a quiet follower looks whether its listener has gone. */
    private static final Duration LISTENER_CHECK = Duration.ofSeconds(1);
    /** How often a feed looks whether what it reads from has gone (its sandbox deleted or stopped). */
    private static final long SOURCE_CHECK_NANOS = Duration.ofSeconds(1).toNanos();

    /**
     * What a feed reads from.
     *
     * @param key  what tells one process from another (followers with equal keys share a feed)
     * @param open opens a handle on the process's output for the feed
     * @param gone whether the process can no longer end by itself (its sandbox was deleted or
     *             stopped): the followers then leave without an exit
     */
    public record Source(Object key, Supplier<ExecHandle> open, BooleanSupplier gone) {
    }

    /** What a feed passes to its followers. */
    private sealed interface Item {
    }

    private record Chunk(SharedChunk chunk) implements Item {
    }

    /** The follower may have missed output (it fell behind, or output was dropped): it reads on its own. */
    private record Behind() implements Item {
    }

    private record Ended(Optional<ExitStatus> exit) implements Item {
    }

    private record SourceGone() implements Item {
    }

    private record Failed(RuntimeException failure) implements Item {
    }

    private static final Item BEHIND = new Behind();

    private final Map<Object, Feed> feeds = new HashMap<>(); // guarded by itself

    /**
     * Passes the output to {@code listener} from the given offsets until the process ends (returns
     * its exit) or the listener leaves.
     *
     * @param own a handle of the follower's own, for what it reads without the feed
     * @throws CancellationException when the listener or the source has gone
     */
    public Optional<ExitStatus> follow(Source source, ExecHandle own, ExecListener listener, long stdoutOffset, long stderrOffset)
            throws InterruptedException {
        var pump = new OutputPump(own, listener, 0, stdoutOffset, stderrOffset);
        pump.drainAll();
        try (var subscription = join(source, pump.offset(OutputKind.STDOUT), pump.offset(OutputKind.STDERR))) {
            pump.drainAll(); // what a feed older than this follower read before it joined
            while (true) {
                var item = subscription.next(LISTENER_CHECK);
                if (listener.gone()) throw new CancellationException("the listener has gone");
                switch (item) {
                    case null -> { }
                    case Chunk c -> {
                        if (!pump.take(c.chunk())) pump.drainAll();
                    }
                    case Behind b -> {
                        subscription.caughtUp(); // before reading: what the feed drops from now on is still in the files
                        pump.drainAll();
                    }
                    case Ended e -> {
                        pump.drainAll();
                        return e.exit();
                    }
                    case SourceGone g -> throw new CancellationException("the process's sandbox has gone");
                    case Failed f -> throw f.failure();
                }
            }
        }
    }

    /** How many processes have a feed now. */
    public int active() {
        synchronized (feeds) {
            return feeds.size();
        }
    }

    /** @param stdoutOffset where a new feed begins reading: where this follower stands, the end of the output as it knows it */
    private Subscription join(Source source, long stdoutOffset, long stderrOffset) {
        synchronized (feeds) {
            var feed = feeds.get(source.key());
            if (feed == null) {
                feed = new Feed(source, stdoutOffset, stderrOffset);
                feeds.put(source.key(), feed);
                Thread.ofVirtual().name("output-feed").start(feed::run);
            }
            var subscription = new Subscription(feed);
            feed.subscribers.add(subscription);
            return subscription;
        }
    }

    private final class Feed implements ExecListener {
        private final Source source;
        private final List<Subscription> subscribers = new CopyOnWriteArrayList<>();
        private final long stdoutStart;
        private final long stderrStart;
        /** Reads for the feed; where it stands is where the next chunk starts. Set once {@link #run} opened the handle. */
        private OutputPump pump;
        private long nextSourceCheck = System.nanoTime() + SOURCE_CHECK_NANOS;
        private boolean sourceGone;

        Feed(Source source, long stdoutOffset, long stderrOffset) {
            this.source = source;
            this.stdoutStart = stdoutOffset;
            this.stderrStart = stderrOffset;
        }

        void run() {
            try (var handle = source.open().get()) {
                pump = new OutputPump(handle, this, 0, stdoutStart, stderrStart);
                while (true) {
                    try {
                        var exit = pump.run(Long.MAX_VALUE);
                        pump.drainAll();
                        end(new Ended(exit));
                        return;
                    } catch (CancellationException e) {
                        if (sourceGone) {
                            end(new SourceGone());
                            return;
                        }
                        if (retireIfUnfollowed()) return;
                    }
                }
            } catch (RuntimeException e) {
                end(new Failed(e));
            } catch (InterruptedException e) {
                end(new Failed(new CancellationException("the output feed was interrupted")));
            }
        }

        /** Called by the pump once it has counted {@code data}: the chunk started {@code data.length} before where the pump stands. */
        @Override
        public void output(OutputKind kind, byte[] data, long offsetAfter) {
            long stdout = pump.offset(OutputKind.STDOUT) - (kind == OutputKind.STDOUT ? data.length : 0);
            long stderr = pump.offset(OutputKind.STDERR) - (kind == OutputKind.STDERR ? data.length : 0);
            var item = new Chunk(new SharedChunk(kind, data, stdout, stderr));
            for (var subscriber : subscribers) subscriber.offer(item);
        }

        @Override
        public void dropped(OutputKind kind, long from, long to) {
            for (var subscriber : subscribers) subscriber.offer(BEHIND);
        }

        /** Nobody follows any more, or the source has gone: the pump stops and {@link #run} decides. */
        @Override
        public boolean gone() {
            if (subscribers.isEmpty()) return true;
            if (System.nanoTime() < nextSourceCheck) return false;
            nextSourceCheck = System.nanoTime() + SOURCE_CHECK_NANOS;
            sourceGone = source.gone().getAsBoolean();
            return sourceGone;
        }

        /** Ends the feed if nobody follows it; a follower that joins meanwhile keeps it going. */
        private boolean retireIfUnfollowed() {
            synchronized (feeds) {
                if (!subscribers.isEmpty()) return false;
                feeds.remove(source.key(), this);
                return true;
            }
        }

        /** A follower that joins from now on starts a new feed; every one that joined before gets {@code last}. */
        private void end(Item last) {
            synchronized (feeds) {
                feeds.remove(source.key(), this);
            }
            for (var subscriber : subscribers) subscriber.queue.offer(last);
        }
    }

    private static final class Subscription implements AutoCloseable {
        private final Feed feed;
        private final LinkedBlockingQueue<Item> queue = new LinkedBlockingQueue<>();
        private volatile boolean behind;

        Subscription(Feed feed) {
            this.feed = feed;
        }

        /** Called by the feed's thread. A follower too far behind gets one {@link Behind} instead of more chunks. */
        void offer(Item item) {
            if (behind) return;
            if (queue.size() >= MAX_QUEUED || item == BEHIND) {
                behind = true;
                queue.offer(BEHIND);
            } else queue.offer(item);
        }

        void caughtUp() {
            behind = false;
        }

        Item next(Duration timeout) throws InterruptedException {
            return queue.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }

        @Override
        public void close() {
            feed.subscribers.remove(this);
        }
    }
}
