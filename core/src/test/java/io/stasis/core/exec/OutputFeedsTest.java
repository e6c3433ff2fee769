package io.stasis.core.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * Followers sharing one reader still get every byte once and in order, whenever they join, from
 * whatever offset, however slowly they take it, across drops; the feed reads each piece once,
 * and ends with the process or with its last follower.
 */
class OutputFeedsTest {
    private final OutputFeeds feeds = new OutputFeeds();

    @RepeatedTest(5)
    void everyFollowerGetsEveryByteOnceWhateverItsOffsetAndPace() throws Exception {
        var process = new FakeOutputFiles();
        var random = new Random();
        var followers = new ArrayList<Follower>();
        var writer = Thread.ofVirtual().start(() -> {
            for (int i = 0; i < 400; i++) {
                process.write(random.nextBoolean() ? OutputKind.STDOUT : OutputKind.STDERR, 1 + random.nextInt(300));
                if (i % 40 == 0) sleep(2);
            }
        });
        for (int i = 0; i < 12; i++) {
            long offset = i % 3 == 0 ? 0 : process.size(OutputKind.STDOUT); // from the start or from where it stands now
            var follower = new Follower(i % 4 == 0 ? 200_000 : 0); // every fourth one is slow
            follower.start(feeds, process, offset, i % 3 == 0 ? 0 : process.size(OutputKind.STDERR));
            followers.add(follower);
            sleep(1 + random.nextInt(4));
        }
        writer.join();
        process.exit(ExitStatus.exited(3));
        for (var follower : followers) {
            assertThat(follower.result.get(30, TimeUnit.SECONDS)).contains(ExitStatus.exited(3));
            for (var kind : OutputKind.values()) {
                byte[] written = process.written(kind);
                byte[] seen = follower.seen.get(kind).toByteArray();
                long from = follower.from.get(kind);
                assertThat(seen).as("%s from %d", kind, from).isEqualTo(Arrays.copyOfRange(written, (int) from, written.length));
            }
        }
        assertThat(followers.stream().mapToInt(f -> f.shared.get()).sum()).as("chunks taken from the feed").isPositive();
        awaitNoFeed();
    }

    @Test
    void aFollowerAtTheLiveEdgeTakesTheFeedsChunksAndDoesNotReadThemItself() throws Exception {
        var process = new FakeOutputFiles();
        var followers = List.of(new Follower(0), new Follower(0), new Follower(0));
        for (var f : followers) f.start(feeds, process, 0, 0);
        sleep(50);
        int readsBefore = process.ownReads();
        for (int i = 0; i < 50; i++) {
            process.write(OutputKind.STDOUT, 10);
            sleep(2);
        }
        process.exit(ExitStatus.exited(0));
        for (var f : followers) {
            f.result.get(10, TimeUnit.SECONDS);
            assertThat(f.seen.get(OutputKind.STDOUT).toByteArray()).isEqualTo(process.written(OutputKind.STDOUT));
        }
        assertThat(followers.stream().mapToInt(f -> f.shared.get()).sum()).isGreaterThan(100);
        // each follower reads by itself once at the end; the feed did the rest
        assertThat(process.ownReads() - readsBefore).isLessThanOrEqualTo(followers.size() * 4 * 2);
    }

    @Test
    void aFollowerThatFallsFarBehindReadsOnByItselfAndMissesNothing() throws Exception {
        var process = new FakeOutputFiles();
        var release = new CountDownLatch(1);
        var stuck = new Follower(0) {
            @Override
            public void output(OutputKind stream, byte[] data, long offsetAfter) {
                super.output(stream, data, offsetAfter);
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        var quick = new Follower(0);
        stuck.start(feeds, process, 0, 0);
        quick.start(feeds, process, 0, 0);
        sleep(20);
        for (int i = 0; i < OutputFeeds.MAX_QUEUED + 300; i++) {
            process.write(OutputKind.STDOUT, 1);
            awaitSeen(quick, i + 1); // one chunk per byte: the feed reads each write by itself
        }
        release.countDown();
        process.exit(ExitStatus.exited(0));
        for (var f : List.of(stuck, quick)) {
            f.result.get(10, TimeUnit.SECONDS);
            assertThat(f.seen.get(OutputKind.STDOUT).toByteArray()).isEqualTo(process.written(OutputKind.STDOUT));
        }
    }

    @Test
    void droppedOutputIsReportedToEveryFollowerAndNotPassedOnAsZeros() throws Exception {
        var process = new FakeOutputFiles();
        var slow = new Follower(50_000);
        var quick = new Follower(0);
        slow.start(feeds, process, 0, 0);
        quick.start(feeds, process, 0, 0);
        for (int i = 0; i < 30; i++) process.write(OutputKind.STDOUT, 1000);
        process.keepLast(OutputKind.STDOUT, 5000);
        for (int i = 0; i < 30; i++) process.write(OutputKind.STDOUT, 1000);
        process.exit(ExitStatus.exited(0));
        for (var f : List.of(slow, quick)) {
            f.result.get(10, TimeUnit.SECONDS);
            byte[] seen = f.seen.get(OutputKind.STDOUT).toByteArray();
            byte[] written = process.written(OutputKind.STDOUT);
            assertThat(seen.length).isEqualTo(written.length);
            for (int i = 0; i < seen.length; i++)
                if (seen[i] != 0 || !f.wasDropped(i)) assertThat(seen[i]).as("offset %d", i).isEqualTo(written[i]);
        }
    }

    @Test
    void theFeedEndsWithItsLastFollowerAndANewOneStartsAgain() throws Exception {
        var process = new FakeOutputFiles();
        var gone = new AtomicBoolean();
        var first = new Follower(0, gone);
        first.start(feeds, process, 0, 0);
        process.write(OutputKind.STDOUT, 5);
        awaitSeen(first, 5);
        gone.set(true);
        assertThatThrownBy(() -> first.result.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(CancellationException.class);
        awaitNoFeed();

        var second = new Follower(0);
        second.start(feeds, process, 5, 0);
        process.write(OutputKind.STDOUT, 7);
        process.exit(ExitStatus.killed(9));
        assertThat(second.result.get(10, TimeUnit.SECONDS)).contains(ExitStatus.killed(9));
        assertThat(second.seen.get(OutputKind.STDOUT).size()).isEqualTo(7);
        awaitNoFeed();
    }

    @Test
    void followersLeaveWithoutAnExitWhenTheSourceHasGone() throws Exception {
        var process = new FakeOutputFiles();
        var sourceGone = new AtomicBoolean();
        var follower = new Follower(0);
        follower.from.put(OutputKind.STDOUT, 0L);
        follower.from.put(OutputKind.STDERR, 0L);
        follower.result = CompletableFuture.supplyAsync(() -> {
            try (var own = process.handle()) {
                return feeds.follow(new OutputFeeds.Source(process, process::feedHandle, sourceGone::get), own, follower, 0, 0);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, r -> Thread.ofVirtual().start(r));
        sleep(20);
        sourceGone.set(true);
        process.write(OutputKind.STDOUT, 1);
        assertThatThrownBy(() -> follower.result.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(CancellationException.class);
        awaitNoFeed();
    }

    private void awaitNoFeed() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (feeds.active() > 0 && System.nanoTime() < deadline) sleep(10);
        assertThat(feeds.active()).as("feeds left").isZero();
    }

    private static void awaitSeen(Follower follower, int bytes) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (follower.seen.get(OutputKind.STDOUT).size() < bytes && System.nanoTime() < deadline)
            LockSupport.parkNanos(100_000);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A follower's listener: what it saw, per stream, zeros where it was told of a drop. */
    static class Follower implements ExecListener {
        final Map<OutputKind, ByteArrayOutputStream> seen = new EnumMap<>(Map.of(
                OutputKind.STDOUT, new ByteArrayOutputStream(), OutputKind.STDERR, new ByteArrayOutputStream()));
        final Map<OutputKind, Long> from = new EnumMap<>(OutputKind.class);
        final List<long[]> dropped = new ArrayList<>();
        final AtomicInteger shared = new AtomicInteger();
        private final long nanosPerChunk;
        private final AtomicBoolean gone;
        CompletableFuture<Optional<ExitStatus>> result;

        Follower(long nanosPerChunk) {
            this(nanosPerChunk, new AtomicBoolean());
        }

        Follower(long nanosPerChunk, AtomicBoolean gone) {
            this.nanosPerChunk = nanosPerChunk;
            this.gone = gone;
        }

        void start(OutputFeeds feeds, FakeOutputFiles process, long stdoutOffset, long stderrOffset) {
            from.put(OutputKind.STDOUT, stdoutOffset);
            from.put(OutputKind.STDERR, stderrOffset);
            result = CompletableFuture.supplyAsync(() -> {
                try (var own = process.handle()) {
                    return feeds.follow(new OutputFeeds.Source(process, process::feedHandle, () -> false), own, this, stdoutOffset, stderrOffset);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }, r -> Thread.ofVirtual().start(r));
        }

        @Override
        public void output(OutputKind stream, byte[] data, long offsetAfter) {
            var out = seen.get(stream);
            assertThat(offsetAfter).as("offsets exact").isEqualTo(from.get(stream) + out.size() + data.length);
            out.writeBytes(data);
            if (nanosPerChunk > 0) LockSupport.parkNanos(nanosPerChunk);
        }

        @Override
        public void shared(SharedChunk chunk) {
            shared.incrementAndGet();
            assertThat(chunk.encoded("test", () -> "encoded once")).isEqualTo("encoded once");
            ExecListener.super.shared(chunk);
        }

        @Override
        public void dropped(OutputKind stream, long from, long to) {
            var out = seen.get(stream);
            assertThat(from).isEqualTo(this.from.get(stream) + out.size());
            dropped.add(new long[]{from, to});
            out.writeBytes(new byte[(int) (to - from)]);
        }

        @Override
        public boolean gone() {
            return gone.get();
        }

        boolean wasDropped(long offset) {
            return dropped.stream().anyMatch(r -> offset >= r[0] && offset < r[1]);
        }
    }
}
