package io.stasis.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.stasis.core.spi.BlobInfo;
import io.stasis.core.spi.BlobPage;
import io.stasis.core.spi.BlobStore;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every {@link BlobStore} must do, run against the real thing (a directory, an S3 server). A
 * backend's test extends this and supplies a fresh, empty store per test; the suite closes it.
 */
public abstract class BlobStoreSuite {
    private static final Logger log = LoggerFactory.getLogger(BlobStoreSuite.class);

    private BlobStore store;

    /** A new, empty store for one test. */
    protected abstract BlobStore newStore();

    protected BlobStore store() {
        return store;
    }

    @BeforeEach
    void openStore() {
        store = newStore();
        log.atInfo().addKeyValue("store", store).log("blob store suite: new store");
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    @Test
    void whatIsPutIsGotBack() {
        store.put("a/b/one", bytes("hello"));
        assertThat(read("a/b/one")).isEqualTo(bytes("hello"));
    }

    @Test
    void aMissingObjectIsEmptyEverywhere() {
        assertThat(store.get("no/such/key")).isEmpty();
        assertThat(store.head("no/such/key")).isEmpty();
        assertThat(store.exists("no/such/key")).isFalse();
        assertThat(store.list("no/", Optional.empty(), 10).blobs()).isEmpty();
    }

    @Test
    void headTellsTheSizeAndWhenItWasWritten() {
        Instant before = Instant.now().minus(Duration.ofMinutes(5)); // clocks of other hosts may be a little off
        store.put("sized", new byte[1234]);
        BlobInfo info = store.head("sized").orElseThrow();
        assertThat(info.key()).isEqualTo("sized");
        assertThat(info.size()).isEqualTo(1234);
        assertThat(info.lastModified()).isAfter(before).isBefore(Instant.now().plus(Duration.ofMinutes(5)));
        assertThat(store.exists("sized")).isTrue();
    }

    @Test
    void anEmptyObjectIsAnObject() {
        store.put("empty", new byte[0]);
        assertThat(store.head("empty")).hasValueSatisfying(i -> assertThat(i.size()).isZero());
        assertThat(read("empty")).isEmpty();
    }

    @Test
    void aLargeObjectStreamsBothWays() throws IOException {
        int size = 12 << 20;
        store.put("large", new RandomStream(size, 1), size);
        assertThat(store.head("large").orElseThrow().size()).isEqualTo(size);
        try (InputStream in = store.get("large").orElseThrow(); var expected = new RandomStream(size, 1)) {
            assertThat(in).hasSameContentAs(expected);
        }
    }

    @Test
    void aPutReplacesTheObjectWhole() {
        store.put("k", bytes("first version, longer"));
        store.put("k", bytes("second"));
        assertThat(read("k")).isEqualTo(bytes("second"));
        assertThat(store.head("k").orElseThrow().size()).isEqualTo(6);
    }

    @Test
    void aPutWhoseStreamFailsLeavesNothing() {
        assertThatThrownBy(() -> store.put("broken", new FailingStream(300_000), 1_000_000)).isNotNull();
        assertThat(store.exists("broken")).isFalse();
        assertThat(store.list("", Optional.empty(), 100).blobs()).isEmpty();
    }

    @Test
    void aPutWhoseStreamFailsKeepsTheOldObject() {
        store.put("kept", bytes("old"));
        assertThatThrownBy(() -> store.put("kept", new FailingStream(300_000), 1_000_000)).isNotNull();
        assertThat(read("kept")).isEqualTo(bytes("old"));
    }

    @Test
    void aStreamShorterThanItsLengthIsRefused() {
        assertThatThrownBy(() -> store.put("short", new ByteArrayInputStream(new byte[10]), 20)).isNotNull();
        assertThat(store.exists("short")).isFalse();
    }

    @Test
    void aStreamLongerThanItsLengthIsRefusedOrCutAtTheLength() {
        try {
            store.put("long", new ByteArrayInputStream(new byte[30]), 20);
        } catch (RuntimeException refused) {
            assertThat(store.exists("long")).isFalse();
            return;
        }
        assertThat(store.head("long").orElseThrow().size()).isEqualTo(20);
    }

    @Test
    void listGivesTheKeysUnderAPrefixInOrderWithSizes() {
        for (String key : List.of("b/2", "a/1", "b/1/x", "b/10", "c", "b.txt", "ba"))
            store.put(key, bytes(key));
        assertThat(keys(store.list("b/", Optional.empty(), 100))).containsExactly("b/1/x", "b/10", "b/2");
        assertThat(keys(store.list("", Optional.empty(), 100))).containsExactly("a/1", "b.txt", "b/1/x", "b/10", "b/2", "ba", "c");
        assertThat(store.list("b/1", Optional.empty(), 100).blobs())
                .extracting(BlobInfo::key, BlobInfo::size)
                .containsExactly(tuple("b/1/x", 5L), tuple("b/10", 4L));
    }

    @Test
    void aPrefixNeedNotEndAtASlash() {
        for (String key : List.of("chunks/ab/1", "chunks/ab/2", "chunks/ac/1", "chunks/a", "chunksx"))
            store.put(key, bytes(key));
        assertThat(keys(store.list("chunks/a", Optional.empty(), 100))).containsExactly("chunks/a", "chunks/ab/1", "chunks/ab/2", "chunks/ac/1");
        assertThat(keys(store.list("chunks/ab", Optional.empty(), 100))).containsExactly("chunks/ab/1", "chunks/ab/2");
        assertThat(keys(store.list("chunks", Optional.empty(), 100))).hasSize(5);
    }

    @Test
    void pagesCoverEveryKeyOnceInOrder() {
        var expected = IntStream.range(0, 37).mapToObj(i -> "p/%02d/%s".formatted(i % 7, i)).sorted().toList();
        for (String key : expected) store.put(key, bytes(key));
        store.put("q/outside", bytes("x"));

        var seen = new ArrayList<String>();
        Optional<String> token = Optional.empty();
        int pages = 0;
        do {
            BlobPage page = store.list("p/", token, 10);
            assertThat(page.blobs()).hasSizeLessThanOrEqualTo(10);
            seen.addAll(keys(page));
            token = page.nextPageToken();
            pages++;
            assertThat(pages).as("pages").isLessThan(40);
        } while (token.isPresent());
        assertThat(seen).containsExactlyElementsOf(expected);
        assertThat(store.listAll("p/").map(BlobInfo::key).toList()).containsExactlyElementsOf(expected);
    }

    @Test
    void deleteRemovesAndIsIdempotent() {
        store.put("d/1", bytes("x"));
        store.put("d/2", bytes("y"));
        store.delete("d/1");
        store.delete("d/1");
        store.delete("never/there");
        assertThat(store.exists("d/1")).isFalse();
        assertThat(keys(store.list("d/", Optional.empty(), 10))).containsExactly("d/2");
    }

    @Test
    void concurrentPutsOfDifferentKeysAreAllThere() throws Exception {
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            var done = new ArrayList<Future<?>>();
            for (int i = 0; i < 32; i++) {
                String key = "c/" + i;
                done.add(pool.submit(() -> store.put(key, bytes(key))));
            }
            for (var f : done) f.get();
        }
        assertThat(store.listAll("c/").count()).isEqualTo(32);
        assertThat(read("c/17")).isEqualTo(bytes("c/17"));
    }

    @Test
    void concurrentPutsOfOneKeyLeaveOneWholeVersion() throws Exception {
        try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
            var done = new ArrayList<Future<?>>();
            for (int i = 0; i < 16; i++) {
                byte[] version = new byte[100_000];
                Arrays.fill(version, (byte) i);
                done.add(pool.submit(() -> store.put("same", version)));
            }
            for (var f : done) f.get();
        }
        byte[] result = read("same");
        assertThat(result).hasSize(100_000);
        for (byte b : result) assertThat(b).isEqualTo(result[0]);
    }

    @Test
    void aReaderKeepsTheVersionItOpened() throws IOException {
        store.put("v", new byte[200_000]);
        try (InputStream in = store.get("v").orElseThrow()) {
            byte[] first = in.readNBytes(10);
            byte[] replacement = new byte[50];
            Arrays.fill(replacement, (byte) 1);
            store.put("v", replacement);
            assertThat(first).containsOnly(0);
            assertThat(in.readAllBytes()).hasSize(200_000 - 10).containsOnly(0);
        }
        assertThat(read("v")).hasSize(50);
    }

    @Test
    void badKeysAreRefused() {
        for (String key : List.of("", "/a", "a/", "a//b", "a/../b", ".hidden", "a/.tmp/b", "with space", "ü", "a\\b"))
            assertThatThrownBy(() -> store.put(key, bytes("x"))).as(key).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.get("../etc/passwd")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> store.list("a/", Optional.empty(), 0)).isInstanceOf(IllegalArgumentException.class);
    }

    protected byte[] read(String key) {
        try (InputStream in = store.get(key).orElseThrow(() -> new AssertionError("no object " + key + " in " + store))) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    protected static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static List<String> keys(BlobPage page) {
        return page.blobs().stream().map(BlobInfo::key).toList();
    }

    /** {@code size} pseudo-random bytes, the same for the same seed, without holding them in memory. */
    private static final class RandomStream extends InputStream {
        private final SplittableRandom random;
        private long left;

        RandomStream(long size, long seed) {
            this.left = size;
            this.random = new SplittableRandom(seed);
        }

        @Override
        public int read() {
            if (left == 0) return -1;
            left--;
            return random.nextInt(256);
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (left == 0) return -1;
            int n = (int) Math.min(len, left);
            for (int i = 0; i < n; i++) b[off + i] = (byte) random.nextInt(256);
            left -= n;
            return n;
        }
    }

    /** Gives {@code good} zero bytes, then fails as a broken source (a dying pipe) would. */
    private static final class FailingStream extends InputStream {
        private int good;

        FailingStream(int good) {
            this.good = good;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (good == 0) throw new IOException("source failed on purpose");
            int n = Math.min(len, good);
            Arrays.fill(b, off, off + n, (byte) 0);
            good -= n;
            return n;
        }
    }
}
