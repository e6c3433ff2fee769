package io.stasis.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code GET /v1/sandboxes/{id}/files/watch}: changes made inside a sandbox, as it names them, live. */
@Tag("root")
class FileWatchIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CALM = "{\"lifecycle\": {\"pauseAfterIdle\": null, \"hibernateAfterIdle\": null}}";
    private static ServiceFixture service;
    private static RawApi api;
    private static HttpClient http;

    @BeforeAll
    static void start() throws Exception {
        service = ServiceFixture.start();
        api = new RawApi(service.url, service.rootKey);
        http = HttpClient.newHttpClient();
    }

    @AfterAll
    static void stop() {
        http.close();
        api.close();
        service.close();
    }

    /** A watch stream: its events as "type path [<- from]" lines. */
    private static final class Watch implements AutoCloseable {
        final LinkedBlockingQueue<String> events = new LinkedBlockingQueue<>();
        final List<String> raw = new CopyOnWriteArrayList<>();
        private final HttpResponse<InputStream> response;

        Watch(String sandbox, String query) throws Exception {
            var request = HttpRequest.newBuilder(URI.create(service.url + "/v1/sandboxes/" + sandbox + "/files/watch?" + query))
                    .header("Authorization", "Bearer " + service.rootKey).GET().build();
            response = http.send(request, HttpResponse.BodyHandlers.ofInputStream());
            assertThat(response.statusCode()).isEqualTo(200);
            Thread.ofVirtual().start(() -> {
                try (var in = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
                    String line, event = null;
                    while ((line = in.readLine()) != null) {
                        raw.add(line);
                        if (line.startsWith("event: ")) event = line.substring(7);
                        else if (line.startsWith("data: ")) {
                            JsonNode data = JSON.readTree(line.substring(6));
                            events.add(event.equals("ready") || event.equals("overflow") ? event
                                    : event + " " + data.get("path").asText() + (data.has("from") ? " <- " + data.get("from").asText() : ""));
                        }
                    }
                } catch (Exception e) {
                    // closed by the test
                }
            });
            assertThat(events.poll(10, TimeUnit.SECONDS)).isEqualTo("ready");
        }

        /** Waits for an event equal to {@code expected}, passing over others. */
        void expect(String expected) throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            var seen = new ArrayList<String>();
            while (System.nanoTime() < deadline) {
                String e = events.poll(100, TimeUnit.MILLISECONDS);
                if (e == null) continue;
                if (e.equals(expected)) return;
                seen.add(e);
            }
            throw new AssertionError("no \"" + expected + "\" among " + seen);
        }

        @Override
        public void close() throws Exception {
            response.body().close();
        }
    }

    /** A calm sandbox under {@code runtime} (gVisor only where setup verified runsc). */
    private static String create(String runtime) {
        ServiceFixture.assumeRuntime(runtime);
        return api.post("/v1/sandboxes", "{\"runtime\": \"" + runtime + "\", " + CALM.substring(1)).get("id").asText();
    }

    /** Under gVisor too: the sentry writes through its gofer to the root on the host, where the watch is. */
    @EachRuntime
    void createModifyMoveAndDeleteInNestedDirectories(String runtime) throws Exception {
        String id = create(runtime);
        try (var watch = new Watch(id, "path=/root&recursive=true")) {
            api.sh(id, "mkdir -p /root/a/b && echo one > /root/a/b/f.txt");
            watch.expect("create /root/a");
            watch.expect("create /root/a/b/f.txt");
            api.sh(id, "echo two >> /root/a/b/f.txt");
            watch.expect("modify /root/a/b/f.txt");
            api.sh(id, "mv /root/a/b/f.txt /root/a/g.txt");
            watch.expect("move /root/a/g.txt <- /root/a/b/f.txt");
            api.sh(id, "rm /root/a/g.txt");
            watch.expect("delete /root/a/g.txt");
            assertThat(String.join("\n", watch.raw)).as("no host path").doesNotContain(service.dataDir.toString()).doesNotContain("/btrfs/");
        }
    }

    /**
     * Directories made while the watch is taking in their parents: each is listed or reported,
     * never lost between (btrfs lists only what a directory held when opened, which once let an
     * entry made just before the inotify watch fall between the two).
     */
    @EachRuntime
    void everyEntryOfDirectoriesMadeInQuickSuccessionIsReported(String runtime) throws Exception {
        String id = create(runtime);
        try (var watch = new Watch(id, "path=/root&recursive=true")) {
            api.sh(id, "for i in $(seq 60); do mkdir -p /root/q$i/b && echo x > /root/q$i/b/f.txt; done");
            for (int i = 1; i <= 60; i++) watch.expect("create /root/q" + i + "/b/f.txt");
        }
    }

    /** The files API writes through a nameless file it then links in: one create, nothing of the nameless one. */
    @Test
    void aWriteThroughTheFilesApiIsOneCreate() throws Exception {
        String id = api.post("/v1/sandboxes", CALM).get("id").asText();
        try (var watch = new Watch(id, "path=/root&recursive=true")) {
            assertThat(api.call("PUT", "/v1/sandboxes/" + id + "/files?path=/root/written.txt", "{\"some\": \"json\"}").status()).isEqualTo(200);
            api.sh(id, "touch /root/marker");
            watch.expect("create /root/marker");
            assertThat(watch.raw).as("events before the marker").noneMatch(line -> line.contains("#"));
            assertThat(String.join("\n", watch.raw)).contains("/root/written.txt");
        }
    }

    @EachRuntime
    void aWatchGoesOnAcrossHibernation(String runtime) throws Exception {
        String id = create(runtime);
        try (var watch = new Watch(id, "path=/tmp&recursive=false")) {
            api.post("/v1/sandboxes/" + id + "/hibernate", null);
            api.post("/v1/sandboxes/" + id + "/resume", null);
            api.sh(id, "touch /tmp/after");
            watch.expect("create /tmp/after");
        }
    }

    @Test
    void badWatchesAreClearErrors() {
        String id = api.post("/v1/sandboxes", CALM).get("id").asText();
        assertThat(api.call("GET", "/v1/sandboxes/" + id + "/files/watch?path=/nope", null).errorCode()).isEqualTo("file_not_found");
        assertThat(api.call("GET", "/v1/sandboxes/" + id + "/files/watch", null).status()).isEqualTo(422);
        assertThat(api.call("GET", "/v1/sandboxes/sbx_missing/files/watch?path=/", null).errorCode()).isEqualTo("sandbox_not_found");
    }
}
