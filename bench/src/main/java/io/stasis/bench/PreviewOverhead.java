package io.stasis.bench;

import io.stasis.sdk.CreateSandboxRequest;
import io.stasis.sdk.Preview;
import io.stasis.sdk.PreviewRequest;
import io.stasis.sdk.Sandbox;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.ToDoubleFunction;

/**
 * What the preview listener costs: the same GETs from this JVM (the host) to a web server in a
 * sandbox, once through a public preview's path-based URL ({@code 127.0.0.1:<preview port>/preview/ID/PORT/})
 * and once straight to the sandbox's address on its link, interleaved in rounds so that the
 * machine's noise falls on both alike. Latency: one connection, one request at a time, a small
 * file. Throughput: several connections for a fixed time, the small file (requests/s) and a
 * 1 MiB one (MiB/s). Two servers: busybox {@code httpd} in {@code tiny} (what tiny has; it closes
 * the connection after every response) and Python's {@code http.server} speaking HTTP/1.1 with
 * keep-alive in {@code base}.
 */
final class PreviewOverhead implements Scenario {
    /** The goals: at most 1 ms more at the median, at least 80% of the direct throughput. */
    static final double TARGET_OVERHEAD_MS = 1;
    static final double TARGET_RATIO = 0.8;
    private static final int PORT = 8000;
    private static final int SMALL_BYTES = 1024;
    private static final int LARGE_BYTES = 1 << 20;
    private static final int CONNECTIONS = 8;
    private static final int LARGE_CONNECTIONS = 4;
    private static final Duration ROUND = Duration.ofMillis(1500);
    private static final Duration READY_WAIT = Duration.ofSeconds(30);

    /** A web server in a sandbox: its template, how it is started, and what it is called in figure names. */
    private record Server(String label, String template, List<String> command, String description) {
    }

    private static final String PYTHON_SERVER = """
            import functools, http.server
            class Handler(http.server.SimpleHTTPRequestHandler):
                protocol_version = 'HTTP/1.1'
                disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall between them
                def log_message(self, *args):
                    pass
            http.server.ThreadingHTTPServer(('0.0.0.0', %d), functools.partial(Handler, directory='/www')).serve_forever()
            """.formatted(PORT);

    private static final List<Server> SERVERS = List.of(
            new Server("busybox", "tiny", List.of("httpd", "-f", "-p", Integer.toString(PORT), "-h", "/www"),
                    "busybox httpd in tiny (one request per connection)"),
            new Server("python", "base", List.of("python3", "/srv.py"),
                    "python3 http.server, HTTP/1.1 keep-alive, in base"));

    @Override
    public String name() {
        return "preview";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var figures = new ArrayList<Figure>();
        Map<String, Object> details = new LinkedHashMap<>();
        for (Server server : SERVERS) measure(context, server, figures, details);
        return new ScenarioResult(figures, details);
    }

    private void measure(BenchContext context, Server server, List<Figure> figures, Map<String, Object> details) throws Exception {
        var counts = context.counts();
        var progress = context.progress();
        Sandbox sandbox = context.service().create(CreateSandboxRequest.builder().template(server.template()).build());
        try {
            sandbox.exec("mkdir", "-p", "/www");
            sandbox.files().write("/www/small.html", "x".repeat(SMALL_BYTES - 1) + "\n");
            byte[] large = new byte[LARGE_BYTES];
            Arrays.fill(large, (byte) 'y');
            sandbox.files().write("/www/large.bin", large);
            sandbox.files().write("/srv.py", PYTHON_SERVER);
            sandbox.processes().start(server.command().toArray(String[]::new));
            Preview preview = sandbox.previews().create(PreviewRequest.builder(PORT).isPublic(true).build());
            var viaPreview = previewEndpoint(preview, context.service().previewPort());
            var direct = new HttpLoad.Endpoint(new InetSocketAddress(sandbox.network().address(), PORT),
                    sandbox.network().address() + ":" + PORT, "/small.html");
            awaitServing(direct);
            awaitServing(viaPreview);

            int n = counts.preview();
            int rounds = rounds(n);
            String p = "preview." + server.label();
            progress.say("%s: latency, %d GETs each way on one connection, in %d interleaved rounds", p, n, rounds);
            HttpLoad.latencies(direct, counts.warmup());
            HttpLoad.latencies(viaPreview, counts.warmup());
            double[] directMs = new double[0];
            double[] previewMs = new double[0];
            int perRound = Math.max(1, n / rounds);
            for (int r = 0; r < rounds; r++) {
                directMs = concat(directMs, HttpLoad.latencies(direct, perRound));
                previewMs = concat(previewMs, HttpLoad.latencies(viaPreview, perRound));
                progress.tick(p + " latency", r + 1, rounds);
            }
            var directLatency = Stats.of(directMs);
            var previewLatency = Stats.of(previewMs);
            figures.add(Figure.of(p + ".latency.direct", name(), "ms",
                    "GET of a 1 KiB file straight to the sandbox's address, one connection, one request at a time: " + server.description(),
                    directLatency));
            figures.add(Figure.of(p + ".latency.preview", name(), "ms",
                    "the same GET through the public preview's path URL on the preview listener (kept-alive client connection)",
                    previewLatency));
            figures.add(Figure.of(p + ".latency_overhead", name(), "ms", "p50 through the preview minus p50 direct",
                    Stats.single(previewLatency.p50() - directLatency.p50())).withTarget(Target.atMost(TARGET_OVERHEAD_MS)));

            var small = throughput(context, p + " requests/s", direct, viaPreview, CONNECTIONS, rounds);
            figures.addAll(compare(p + ".rps", "req/s", CONNECTIONS + " connections GETting the 1 KiB file", small,
                    HttpLoad.Round::perSecond, Target.atLeast(TARGET_RATIO)));
            var big = throughput(context, p + " MiB/s", direct.withPath("/large.bin"), viaPreview.withPath(viaPreview.path()
                    .replace("small.html", "large.bin")), LARGE_CONNECTIONS, rounds);
            figures.addAll(compare(p + ".mib_s", "MiB/s", LARGE_CONNECTIONS + " connections GETting a 1 MiB file", big,
                    HttpLoad.Round::mibPerSecond, null));

            var d = new LinkedHashMap<String, Object>();
            d.put("server", server.description());
            d.put("direct", direct.address().toString());
            d.put("preview_url", preview.pathUrl());
            d.put("direct_connections_per_request", small.connectsPerRequest(true));
            d.put("preview_connections_per_request", small.connectsPerRequest(false));
            d.put("rounds", small.describe());
            d.put("large_rounds", big.describe());
            details.put(server.label(), d);
        } finally {
            sandbox.delete();
        }
    }

    /** {@code NAME.direct}, {@code NAME.preview} over the rounds, and {@code NAME_ratio} of their p50s (with {@code goal}, if any). */
    private List<Figure> compare(String name, String unit, String load, Rounds rounds, ToDoubleFunction<HttpLoad.Round> value,
                                 Target goal) {
        var ratio = Figure.of(name + "_ratio", name(), "x", unit + " through the preview / direct, p50 over the rounds",
                Stats.single(rounds.ratio(value)));
        return List.of(
                Figure.of(name + ".direct", name(), unit, load + " for " + ROUND.toMillis() + " ms per round, straight to the sandbox",
                        Stats.of(rounds.direct(value))),
                Figure.of(name + ".preview", name(), unit, "the same through the preview", Stats.of(rounds.preview(value))),
                goal == null ? ratio : ratio.withTarget(goal));
    }

    /** Rounds of each series: the latency samples / 100, 2 to 10. */
    static int rounds(int latencySamples) {
        return Math.clamp(latencySamples / 100, 2, 10);
    }

    /** The path URL as given, connected to on the loopback (its host, {@code localhost}, is the listener's). */
    private static HttpLoad.Endpoint previewEndpoint(Preview preview, int listenerPort) {
        URI url = URI.create(preview.pathUrl());
        String host = url.getHost() + (url.getPort() < 0 ? "" : ":" + url.getPort());
        return new HttpLoad.Endpoint(new InetSocketAddress("127.0.0.1", listenerPort), host, url.getRawPath() + "small.html");
    }

    private static void awaitServing(HttpLoad.Endpoint endpoint) throws IOException {
        long deadline = System.nanoTime() + READY_WAIT.toNanos();
        while (true) {
            try {
                HttpLoad.latencies(endpoint, 1);
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline)
                    throw new IOException("nothing served " + endpoint.path() + " at " + endpoint.address() + " after " + READY_WAIT, e);
                LockSupport.parkNanos(100_000_000);
            }
        }
    }

    /** Direct and preview rounds, alternating. */
    private record Rounds(List<HttpLoad.Round> directRounds, List<HttpLoad.Round> previewRounds) {
        double[] direct(ToDoubleFunction<HttpLoad.Round> value) {
            return directRounds.stream().mapToDouble(value).toArray();
        }

        double[] preview(ToDoubleFunction<HttpLoad.Round> value) {
            return previewRounds.stream().mapToDouble(value).toArray();
        }

        double ratio(ToDoubleFunction<HttpLoad.Round> value) {
            return Stats.of(preview(value)).p50() / Stats.of(direct(value)).p50();
        }

        double connectsPerRequest(boolean ofDirect) {
            var rounds = ofDirect ? directRounds : previewRounds;
            long requests = rounds.stream().mapToLong(HttpLoad.Round::requests).sum();
            return requests == 0 ? 0 : (double) rounds.stream().mapToLong(HttpLoad.Round::connects).sum() / requests;
        }

        List<String> describe() {
            var out = new ArrayList<String>();
            for (int i = 0; i < directRounds.size(); i++)
                out.add("direct " + directRounds.get(i) + " preview " + previewRounds.get(i));
            return out;
        }
    }

    private static Rounds throughput(BenchContext context, String label, HttpLoad.Endpoint direct, HttpLoad.Endpoint viaPreview,
                                     int connections, int rounds) throws IOException {
        context.progress().say("%s: %d connections, %d rounds of %d ms each way", label, connections, rounds, ROUND.toMillis());
        if (context.counts().warmup() > 0) {
            HttpLoad.round(direct, connections, ROUND.dividedBy(3));
            HttpLoad.round(viaPreview, connections, ROUND.dividedBy(3));
        }
        var d = new ArrayList<HttpLoad.Round>();
        var v = new ArrayList<HttpLoad.Round>();
        for (int r = 0; r < rounds; r++) {
            d.add(HttpLoad.round(direct, connections, ROUND));
            v.add(HttpLoad.round(viaPreview, connections, ROUND));
            context.progress().tick(label, r + 1, rounds);
        }
        return new Rounds(d, v);
    }

    private static double[] concat(double[] a, double[] b) {
        double[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
