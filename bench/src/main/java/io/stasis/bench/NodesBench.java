package io.stasis.bench;

import io.stasis.sdk.ExecResult;
import io.stasis.sdk.Sandbox;
import io.stasis.sdk.StasisClient;
import io.stasis.testkit.CuttableRelay;
import io.stasis.testkit.PostgresTestServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Two nodes on one PostgreSQL catalog (a real server from Debian's packages, on this host), each a
 * private service of its own: what answering through another node costs. An exec of {@code true}
 * and a GET of a sandbox of node A, through A (the floor) and through B (checked there, passed on
 * to A, the answer streamed back); a create through A, placed on A, beside the same create on the
 * benchmark's own service (SQLite), the catalog's share of a create; and a create through B, which
 * has no room (its operator's memory limit is 1 MB), so places it on A and passes it on.
 */
final class NodesBench implements Scenario {
    private static final Duration REQUEST_TIMEOUT = Duration.ofMinutes(5);
    private static final int LEASE_SECONDS = 3;
    private static final Duration POLL_TIMEOUT = Duration.ofSeconds(2);

    @Override
    public String name() {
        return "nodes";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        if (!PostgresTestServer.installed()) throw new IllegalStateException("the nodes scenario needs PostgreSQL (apt-get install postgresql)");
        var progress = context.progress();
        int warmup = context.counts().warmup();
        int n = context.counts().exec();
        var figures = new ArrayList<Figure>();
        try (var postgres = PostgresTestServer.start()) {
            String catalog = postgres.newDatabase();
            try (var a = PrivateService.start(progress, 1L << 20, List.of("--catalog", catalog, "--node-name", "bench-a"))) {
                try (var b = PrivateService.start(progress, 1L << 20, List.of("--catalog", catalog, "--node-name", "bench-b",
                        "--root-key-file", a.dataDir().resolve("root.key").toString(), "--node-max-memory-mb", "1"))) {
                    Sandbox onA = a.create("tiny");
                    try (StasisClient viaB = StasisClient.builder().url(b.client().url()).apiKey(a.rootKey())
                            .requestTimeout(REQUEST_TIMEOUT).build()) {
                        Sandbox onAviaB = viaB.sandboxes().get(onA.id());
                        double[] owner = context.sampler().run("exec true, through the owner", warmup, n, i -> exec(onA));
                        double[] forwarded = context.sampler().run("exec true, through another node", warmup, n, i -> exec(onAviaB));
                        figures.add(Figure.of("floor.nodes_exec_owner", name(), "ms",
                                "exec of `true` on node A's tiny sandbox through A (PostgreSQL catalog)", Stats.of(owner)));
                        figures.add(Figure.of("nodes.exec_forwarded", name(), "ms",
                                "the same exec through node B, which checks the key and passes the request on to A", Stats.of(forwarded)));
                        double[] getOwner = context.sampler().run("get, through the owner", warmup, n, i -> get(a.client(), onA.id()));
                        double[] getForwarded = context.sampler().run("get, through another node", warmup, n, i -> get(viaB, onA.id()));
                        figures.add(Figure.of("floor.nodes_get_owner", name(), "ms", "GET of node A's sandbox through A", Stats.of(getOwner)));
                        figures.add(Figure.of("nodes.get_forwarded", name(), "ms", "the same GET through node B", Stats.of(getForwarded)));
                    } finally {
                        onA.delete();
                    }
                    int creates = context.counts().create();
                    double[] onPostgres = context.sampler().run("create, PostgreSQL catalog", warmup, creates, i -> create(a, a));
                    double[] forwardedCreate = context.sampler().run("create, through another node", warmup, creates, i -> create(b, a));
                    double[] onSqlite = context.sampler().run("create, SQLite catalog", warmup, creates, i -> create(context.service(), context.service()));
                    figures.add(Figure.of("floor.nodes_create_sqlite", name(), "ms",
                            "create of a tiny sandbox (the call) on the benchmark's own service: SQLite catalog", Stats.of(onSqlite)));
                    figures.add(Figure.of("nodes.create_postgresql", name(), "ms",
                            "the same create through node A, made on A: PostgreSQL catalog shared with node B", Stats.of(onPostgres)));
                    figures.add(Figure.of("nodes.create_forwarded", name(), "ms",
                            "the same create through node B, which has no room: placed on A and passed on to it", Stats.of(forwardedCreate)));
                }
            }
            figures.addAll(lossToAnswer(context, postgres));
        }
        return ScenarioResult.of(figures);
    }

    /**
     * Node C, whose sandbox is durably hibernated, is cut off from the catalog (its connection to
     * PostgreSQL goes through a relay the benchmark cuts, as a partition would; the service runs in
     * this process, so it cannot be killed): the time from the cut to the first exec through node D
     * that the sandbox answers, adopted and resumed there from the durable store. Its floor is the
     * wait by design, a lease and the grace after it ({@value #LEASE_SECONDS} s each); the rest is
     * noticing (a sweep every third of a lease), adopting, fetching the image and restoring.
     */
    private List<Figure> lossToAnswer(BenchContext context, PostgresTestServer postgres) throws Exception {
        var progress = context.progress();
        Path blobs = Files.createTempDirectory("stasis-bench-blobs-");
        String catalog = postgres.newDatabase();
        try (var relay = CuttableRelay.to(postgres.port())) {
            String throughRelay = catalog.replace(":" + postgres.port() + "/", ":" + relay.port() + "/");
            var shared = List.of("--blob-dir", blobs.toString(), "--hibernate-durable", "--node-lease", LEASE_SECONDS + "s");
            try (var c = PrivateService.start(progress, 1L << 20, with(shared, "--catalog", throughRelay, "--node-name", "bench-c"));
                 var d = PrivateService.start(progress, 1L << 20, with(shared, "--catalog", catalog, "--node-name", "bench-d",
                         "--root-key-file", c.dataDir().resolve("root.key").toString()));
                 // Polled with short requests: one that reaches node C before it stops answering waits for its catalog.
                 var viaD = StasisClient.builder().url(d.client().url()).apiKey(c.rootKey()).requestTimeout(POLL_TIMEOUT).build()) {
                Sandbox onC = c.create("tiny");
                onC.hibernate();
                long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
                while (c.client().sandboxes().get(onC.id()).durableImage() == null) {
                    if (System.nanoTime() > deadline) throw new IllegalStateException("the hibernation of " + onC.id() + " never became durable");
                    LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
                }
                progress.say("cutting node bench-c off from the catalog");
                long cut = System.nanoTime();
                relay.cut();
                deadline = cut + Duration.ofMinutes(2).toNanos();
                while (true) {
                    try {
                        if (viaD.sandboxes().get(onC.id()).exec("true").exitCode() == 0) break;
                    } catch (RuntimeException e) {
                        if (System.nanoTime() > deadline) throw new IllegalStateException("the cut-off node's sandbox never answered elsewhere", e);
                    }
                    LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
                }
                double answered = Format.millis(System.nanoTime() - cut);
                relay.mend();
                // Node C back in reach lets go of its copy of the sandbox; D, closing first, deletes the sandbox it adopted.
                deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
                while (true) {
                    try {
                        c.client().sandboxes().list();
                        break;
                    } catch (RuntimeException e) {
                        if (System.nanoTime() > deadline) throw new IllegalStateException("node bench-c never reached the catalog again", e);
                        LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
                    }
                }
                return List.of(
                        Figure.of("floor.nodes_lease_and_grace", name(), "ms", "the wait by design before a lost node's sandboxes are"
                                + " adopted: its lease and one more (--node-lease " + LEASE_SECONDS + "s)", Stats.of(new double[] {2000.0 * LEASE_SECONDS})),
                        Figure.of("nodes.loss_to_answer", name(), "ms", "from node C's cut from the catalog to its durably hibernated"
                                + " sandbox's first exec answered through node D (adopted, resumed from the store); one run", Stats.of(new double[] {answered})));
            }
        } finally {
            PrivateService.deleteTree(blobs);
        }
    }

    private static List<String> with(List<String> flags, String... more) {
        var all = new ArrayList<>(flags);
        all.addAll(List.of(more));
        return all;
    }

    private static double exec(Sandbox sandbox) {
        long start = System.nanoTime();
        ExecResult result = sandbox.exec("true");
        long end = System.nanoTime();
        if (result.exitCode() != 0) throw new IllegalStateException("true failed: " + result);
        return Format.millis(end - start);
    }

    private static double get(StasisClient client, String id) {
        long start = System.nanoTime();
        client.sandboxes().get(id).state();
        return Format.millis(System.nanoTime() - start);
    }

    /** The time of a create through {@code through}, which must make the sandbox on {@code madeOn}. */
    private static double create(PrivateService through, PrivateService madeOn) {
        long start = System.nanoTime();
        Sandbox sandbox = through.create("tiny");
        double ms = Format.millis(System.nanoTime() - start);
        try {
            if (madeOn != through && madeOn.client().sandboxes().list().stream().noneMatch(s -> s.id().equals(sandbox.id())))
                throw new IllegalStateException("sandbox " + sandbox.id() + " was not made on the node it was placed on");
        } finally {
            sandbox.delete();
        }
        return ms;
    }
}
