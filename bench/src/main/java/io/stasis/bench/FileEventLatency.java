package io.stasis.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.sdk.ExecResult;
import io.stasis.sdk.Sandbox;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * How long a change to a file inside a sandbox takes to reach a client watching the directory:
 * {@code GET /v1/sandboxes/{id}/files/watch?path=/root&recursive=true} (Server-Sent Events:
 * {@code ready} first, then {@code create|modify|delete|move} with {@code {"type", "path",
 * "fileType", "from"?}}). Each sample changes a new file under {@code /root/watched} and is timed
 * on the client's clock from the start of the call that changes it until the first event naming
 * that path arrives:
 * <ul>
 *   <li>{@code put}: {@code PUT .../files} of 16 bytes (the SDK's {@code files().write});</li>
 *   <li>{@code exec_touch}: {@code touch} run by {@code POST .../exec} (the event usually comes
 *       before the exec's answer; the figure includes the exec's start).</li>
 * </ul>
 * Changes are spaced by a random 0-100 ms pause. When the service has no such route (it answers
 * 404), the scenario says so in {@code details.file-watch.skipped} and measures nothing.
 */
final class FileEventLatency implements Scenario {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final long MAX_GAP_NANOS = 100_000_000;
    static final String WATCHED = "/root/watched";
    static final String ROUTE = "/files/watch?path=/root&recursive=true";

    @Override
    public String name() {
        return "file-watch";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var service = context.service();
        Sandbox sandbox = service.create("tiny");
        try (var streams = service.live().eventStreams(1)) {
            sandbox.files().mkdir(WATCHED);
            var ready = new CompletableFuture<Long>();
            var waiting = new AtomicReference<Pending>();
            Map<String, LongAdder> types = new ConcurrentHashMap<>();
            Map<String, LongAdder> matchedTypes = new ConcurrentHashMap<>();
            var stream = streams.get("/v1/sandboxes/" + sandbox.id() + ROUTE, (type, data, received) -> {
                if (type.equals("ready")) {
                    ready.complete(received);
                    return;
                }
                types.computeIfAbsent(type, t -> new LongAdder()).increment();
                var pending = waiting.get();
                if (pending != null && pending.matches(pathOf(data)) && pending.arrived().complete(received))
                    matchedTypes.computeIfAbsent(type, t -> new LongAdder()).increment();
            });
            try {
                ready.applyToEither(stream.ended.thenApply(v -> -1L), v -> v).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof EventStreams.Refused refused && refused.status() == 404) {
                    String why = "route not available: GET /v1/sandboxes/{id}" + ROUTE + " answered 404 (" + refused.getMessage() + ")";
                    context.progress().say("file-watch skipped: %s", why);
                    return new ScenarioResult(List.of(), Map.of("skipped", why));
                }
                throw e;
            }
            if (!ready.isDone()) throw new IllegalStateException(stream.what() + " ended before its ready event");

            var random = new SplittableRandom(7);
            int n = context.counts().fileEvents();
            int warmup = context.counts().warmup();
            byte[] content = "stasis-bench-16B".getBytes(StandardCharsets.US_ASCII);
            double[] putCalls = new double[n];
            double[] puts = context.sampler().run("files PUT -> watch event", warmup, n, i -> {
                OutputLatency.pause(random.nextLong(MAX_GAP_NANOS));
                var pending = Pending.of(WATCHED + "/put-" + (i < 0 ? "w" + -i : i));
                waiting.set(pending);
                long start = System.nanoTime();
                sandbox.files().write(pending.path(), content);
                long answered = System.nanoTime();
                long arrived = await(pending, types);
                if (i >= 0) putCalls[i] = Format.millis(answered - start);
                return Format.millis(arrived - start);
            });
            double[] touches = context.sampler().run("exec touch -> watch event", warmup, n, i -> {
                OutputLatency.pause(random.nextLong(MAX_GAP_NANOS));
                var pending = Pending.of(WATCHED + "/touch-" + (i < 0 ? "w" + -i : i));
                waiting.set(pending);
                long start = System.nanoTime();
                ExecResult result = sandbox.exec("touch", pending.path());
                if (result.exitCode() != 0) throw new IllegalStateException("touch failed: " + result);
                return Format.millis(await(pending, types) - start);
            });
            stream.cancel();
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("eventsSeen", counts(types));
            details.put("eventsMatched", counts(matchedTypes));
            details.put("gapBetweenChangesMs", "uniform 0-100");
            return new ScenarioResult(List.of(
                    Figure.of("file_event_latency.put", name(), "ms", "PUT .../files of a new 16-byte file under " + WATCHED
                            + " until the watch (" + ROUTE + ") delivers an event naming it", Stats.of(puts)),
                    Figure.of("file_event_latency.exec_touch", name(), "ms", "POST .../exec of `touch` of a new file under " + WATCHED
                            + " (from the start of the exec) until the watch delivers an event naming it", Stats.of(touches)),
                    Figure.of("file_put_call", name(), "ms", "that PUT .../files call alone, until it answers", Stats.of(putCalls))),
                    details);
        } finally {
            sandbox.delete();
        }
    }

    private static long await(Pending pending, Map<String, LongAdder> types) throws Exception {
        try {
            return pending.arrived().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException("no watch event for " + pending.path() + " within " + WAIT + "; events seen so far: "
                    + counts(types), e);
        }
    }

    private static Map<String, Long> counts(Map<String, LongAdder> adders) {
        var out = new TreeMap<String, Long>();
        adders.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    private static String pathOf(String data) {
        try {
            JsonNode node = JSON.readTree(data);
            return node.path("path").asText("");
        } catch (IOException e) {
            throw new UncheckedIOException("a watch event that is not JSON: " + data, e);
        }
    }

    private record Pending(String path, CompletableFuture<Long> arrived) {
        static Pending of(String path) {
            return new Pending(path, new CompletableFuture<>());
        }

        /** The event's path, absolute or relative to the watched directory. */
        boolean matches(String eventPath) {
            return eventPath.equals(path) || !eventPath.startsWith("/") && !eventPath.isEmpty() && path.endsWith("/" + eventPath);
        }
    }
}
