package io.stasis.sdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The event stream and file watches against documented Server-Sent Events. */
class LiveStreamsTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    private FakeApi api;
    private StasisClient client;

    @BeforeEach
    void start() throws IOException {
        api = new FakeApi();
        client = StasisClient.builder().url(api.url()).apiKey("sk_test").requestTimeout(Duration.ofSeconds(5)).build();
    }

    @AfterEach
    void stop() {
        client.close();
        api.close();
    }

    private static String lifecycle(long id, String to) {
        return "event: lifecycle\nid: " + id + "\ndata: {\"sandboxId\": \"sbx_1\", \"from\": \"running\", \"to\": \""
                + to + "\", \"reason\": \"api\"}\n\n";
    }

    @Test
    void eventsResumeAfterTheLastDeliveredIdWithoutGapsOrRepeats() throws Exception {
        var connections = new AtomicInteger();
        var testDone = new CountDownLatch(1);
        api.on("GET /v1/events", (request, exchange) -> {
            var out = FakeApi.startEvents(exchange);
            if (connections.incrementAndGet() == 1) {
                FakeApi.send(out, lifecycle(6, "paused") + ": ping\n\n" + lifecycle(7, "running"));
                return; // the connection ends: the client reconnects
            }
            FakeApi.send(out, lifecycle(7, "running") + lifecycle(8, "hibernated")); // 7 again: a replay
            await(testDone); // open like a live stream until the test ends
        });
        List<Event> seen = new CopyOnWriteArrayList<>();
        var three = new CountDownLatch(3);
        try (EventSubscription events = client.streamEvents(5, e -> {
            seen.add(e);
            three.countDown();
        })) {
            assertThat(three.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            assertThat(events.isOpen()).isTrue();
            assertThat(events.lastEventId()).isEqualTo(8);
        } finally {
            testDone.countDown();
        }
        assertThat(seen).extracting(Event::id).containsExactly(6L, 7L, 8L);
        assertThat(seen.getLast().type()).isEqualTo("lifecycle");
        assertThat(seen.getLast().string("to")).isEqualTo("hibernated");
        assertThat(seen.getLast().sandboxId()).isEqualTo("sbx_1");
        var requests = api.requests.stream().filter(r -> r.path().equals("/v1/events")).toList();
        assertThat(requests.get(0).query()).isEqualTo("after=5");
        assertThat(requests.get(0).header("Accept")).isEqualTo("text/event-stream");
        assertThat(requests.get(1).header("Last-Event-ID")).isEqualTo("7");
    }

    /** Holds a fake stream open; never longer than the test's own waits. */
    private static void await(CountDownLatch latch) {
        try {
            latch.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void aSandboxsEventsRefusedBeforeTheStreamThrowAtOnce() {
        api.json("GET /v1/sandboxes/nope/events", 404,
                "{\"error\": {\"code\": \"sandbox_not_found\", \"message\": \"no sandbox 'nope'\"}}");
        assertThatThrownBy(() -> client.sandboxes().streamEvents("nope", 0, e -> { }))
                .isInstanceOfSatisfying(NotFoundException.class, e -> assertThat(e.code()).isEqualTo("sandbox_not_found"));
        assertThatThrownBy(() -> client.streamEvents(-1, e -> { })).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aConsumerThatThrowsEndsTheSubscriptionWithItsException() throws Exception {
        api.on("GET /v1/events", (request, exchange) -> FakeApi.send(FakeApi.startEvents(exchange), lifecycle(1, "paused")));
        var failure = new IllegalStateException("consumer broke");
        EventSubscription events = client.streamEvents(0, e -> {
            throw failure;
        });
        assertThatThrownBy(() -> events.await(WAIT)).isSameAs(failure);
        assertThat(events.isOpen()).isFalse();
        assertThat(api.requests).hasSize(1);
    }

    @Test
    void aWatchReportsChangesFromItsReadyEventOnUntilAnOverflow() throws Exception {
        api.on("GET /v1/sandboxes/sbx_1/files/watch", (request, exchange) -> {
            var out = FakeApi.startEvents(exchange);
            FakeApi.send(out, "event: ready\ndata: {}\n\n");
            FakeApi.send(out, "event: create\ndata: {\"type\": \"create\", \"path\": \"/root/a.txt\", \"fileType\": \"file\"}\n\n");
            FakeApi.send(out, ": keep-alive\n\nevent: create\ndata: {\"type\": \"create\", \"path\": \"/root/d\", "
                    + "\"fileType\": \"directory\"}\n\n");
            FakeApi.send(out, "event: move\ndata: {\"type\": \"move\", \"path\": \"/root/b.txt\", \"fileType\": \"file\", "
                    + "\"from\": \"/root/a.txt\"}\n\n");
            FakeApi.send(out, "event: attrib\ndata: {\"type\": \"attrib\", \"path\": \"/root/b.txt\"}\n\n");
            FakeApi.send(out, "event: overflow\ndata: {}\n\n");
        });
        List<FileChange> seen = new CopyOnWriteArrayList<>();
        FileWatch watch = client.sandboxes().files("sbx_1").watch("/root", true, seen::add);
        assertThat(api.last().query()).isEqualTo("path=%2Froot&recursive=true");
        assertThat(watch.await(WAIT)).isTrue();
        assertThat(watch.overflowed()).isTrue();
        assertThat(seen).containsExactly(
                new FileChange(FileChange.Kind.CREATE, "/root/a.txt", FileType.FILE, null),
                new FileChange(FileChange.Kind.CREATE, "/root/d", FileType.DIR, null),
                new FileChange(FileChange.Kind.MOVE, "/root/b.txt", FileType.FILE, "/root/a.txt"),
                new FileChange(FileChange.Kind.OVERFLOW, "/root", null, null));
        assertThat(seen.get(2)).hasToString("move /root/b.txt <- /root/a.txt");
    }

    @Test
    void aWatchThatTheServerEndsFailsSoTheCallerRescans() throws Exception {
        api.on("GET /v1/sandboxes/sbx_1/files/watch", (request, exchange) ->
                FakeApi.send(FakeApi.startEvents(exchange), "event: ready\ndata: {}\n\n"));
        FileWatch watch = client.sandboxes().files("sbx_1").watch("/root", false, change -> { });
        assertThatThrownBy(() -> watch.await(WAIT)).isInstanceOf(StasisConnectionException.class)
                .hasMessageContaining("the watch of /root ended");
        assertThat(watch.overflowed()).isFalse();
    }

    @Test
    void aRefusedWatchThrowsAtOnce() {
        api.json("GET /v1/sandboxes/sbx_1/files/watch", 404,
                "{\"error\": {\"code\": \"file_not_found\", \"message\": \"no /nope\"}}");
        assertThatThrownBy(() -> client.sandboxes().files("sbx_1").watch("/nope", true, change -> { }))
                .isInstanceOfSatisfying(NotFoundException.class, e -> assertThat(e.code()).isEqualTo("file_not_found"));
        api.json("GET /v1/sandboxes/sbx_1/files/watch", 200, "{}");
        assertThatThrownBy(() -> client.sandboxes().files("sbx_1").watch("/root", true, change -> { }))
                .isInstanceOf(StasisClientException.class).hasMessageContaining("instead of an event stream");
    }

    @Test
    void aWatchThatNeverGetsReadyTimesOut() {
        var released = new CountDownLatch(1);
        api.on("GET /v1/sandboxes/sbx_1/files/watch", (request, exchange) -> {
            FakeApi.startEvents(exchange).flush();
            await(released);
        });
        try (var impatient = StasisClient.builder().url(api.url()).apiKey("k").requestTimeout(Duration.ofMillis(300)).build()) {
            assertThatThrownBy(() -> impatient.sandboxes().files("sbx_1").watch("/root", true, change -> { }))
                    .isInstanceOf(StasisTimeoutException.class).hasMessageContaining("not ready within");
        } finally {
            released.countDown();
        }
    }

    @Test
    void closingAWatchStopsItsThreadAndIsIdempotent() throws Exception {
        var release = new CountDownLatch(1);
        api.on("GET /v1/sandboxes/sbx_1/files/watch", (request, exchange) -> {
            var out = FakeApi.startEvents(exchange);
            FakeApi.send(out, "event: ready\ndata: {}\n\n");
            await(release);
        });
        FileWatch watch = client.sandboxes().files("sbx_1").watch("/root", true, change -> { });
        assertThat(watch.isOpen()).isTrue();
        watch.close();
        watch.close();
        assertThat(watch.isOpen()).isFalse();
        assertThat(watch.await(Duration.ofMillis(10))).as("closed, no failure").isTrue();
        release.countDown();
    }
}
