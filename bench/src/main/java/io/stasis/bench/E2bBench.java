package io.stasis.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.Sandbox;
import io.stasis.testkit.NodeScripts;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The official e2b JavaScript SDK against the service's /e2b endpoint (node runs a script shipped in
 * this jar, its packages installed once from the pinned lockfile), beside the same operations
 * through Stasis's own Java SDK: create (E2B's also makes the default user, an envd token and the
 * preview of every port), a command ({@code commands.run('true')}, bash as E2B runs it, against
 * an exec of {@code bash -l -c true}), and pause then connect (standby then resume).
 */
final class E2bBench implements Scenario {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TEMPLATE = "base";
    private static final List<String> SCRIPT = List.of("package.json", "package-lock.json", "bench.mjs");
    private static final Duration NODE_TIMEOUT = Duration.ofMinutes(20);

    @Override
    public String name() {
        return "e2b";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        if (!NodeScripts.available())
            return new ScenarioResult(List.of(), Map.of("skipped", "node and npm are needed (apt-get install nodejs npm)"));
        var service = context.service();
        int creates = context.counts().create();
        int runs = context.counts().exec();
        int warmup = context.counts().warmup() == 0 ? 0 : 1;
        Path script = installScript(context);

        context.progress().say("e2b SDK: %d creates, %d commands, %d pause and connect", creates, runs, creates);
        var env = new LinkedHashMap<String, String>();
        env.put("E2B_API_URL", service.client().url() + "/e2b");
        env.put("E2B_SANDBOX_URL", service.client().url() + "/e2b/envd");
        env.put("E2B_API_KEY", service.rootKey());
        env.put("BENCH_CREATES", Integer.toString(creates));
        env.put("BENCH_RUNS", Integer.toString(runs));
        env.put("BENCH_WARMUP", Integer.toString(warmup));
        env.put("BENCH_TEMPLATE", TEMPLATE);
        var run = NodeScripts.run(script, env, NODE_TIMEOUT, "node", "bench.mjs");
        if (run.code() != 0) throw new IllegalStateException("node bench.mjs exited " + run.code() + ": " + run.output());
        String output = run.output();
        JsonNode times = JSON.readTree(output.lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b)
                .orElseThrow(() -> new IllegalStateException("the e2b script printed no result: " + output)));

        double[] javaCreate = context.sampler().run("Java SDK: create (base)", warmup, creates, i -> {
            long start = System.nanoTime();
            Sandbox sandbox = service.create(TEMPLATE);
            double ms = Format.millis(System.nanoTime() - start);
            sandbox.delete();
            return ms;
        });
        Sandbox sandbox = service.create(TEMPLATE);
        double[] javaRun;
        double[] javaPauseResume;
        try {
            var command = ExecRequest.builder("/bin/bash", "-l", "-c", "true").build();
            javaRun = context.sampler().run("Java SDK: exec bash -l -c true", warmup, runs, i -> {
                long start = System.nanoTime();
                int code = sandbox.exec(command).exitCode();
                if (code != 0) throw new IllegalStateException("bash -l -c true exited " + code);
                return Format.millis(System.nanoTime() - start);
            });
            javaPauseResume = context.sampler().run("Java SDK: standby then resume", warmup, creates, i -> {
                long start = System.nanoTime();
                sandbox.standby();
                sandbox.resume();
                return Format.millis(System.nanoTime() - start);
            });
        } finally {
            sandbox.delete();
        }
        var figures = new ArrayList<Figure>();
        figures.add(Figure.of("floor.e2b_create_java", name(), "ms", "create of a base sandbox through Stasis's Java SDK", Stats.of(javaCreate)));
        figures.add(Figure.of("e2b.create", name(), "ms", "Sandbox.create('base') of the e2b SDK through /e2b: the create, the"
                + " default user, an envd token, the preview of every port", Stats.of(samples(times, "create"))));
        figures.add(Figure.of("floor.e2b_run_java", name(), "ms", "exec of bash -l -c true through the Java SDK", Stats.of(javaRun)));
        figures.add(Figure.of("e2b.run", name(), "ms", "commands.run('true') of the e2b SDK: envd's Start over Connect,"
                + " bash -l -c as the user, output followed to the end", Stats.of(samples(times, "run"))));
        figures.add(Figure.of("floor.e2b_pause_connect_java", name(), "ms", "standby then resume through the Java SDK", Stats.of(javaPauseResume)));
        figures.add(Figure.of("e2b.pause_connect", name(), "ms", "pause() then Sandbox.connect() of the e2b SDK (standby, resume,"
                + " a new envd token)", Stats.of(samples(times, "pause_connect"))));
        return new ScenarioResult(figures, Map.of("template", TEMPLATE, "script", script.toString()));
    }

    private static double[] samples(JsonNode times, String field) {
        var node = times.path(field);
        if (!node.isArray() || node.isEmpty()) throw new IllegalStateException("the e2b script measured no " + field + ": " + times);
        double[] out = new double[node.size()];
        for (int i = 0; i < out.length; i++) out[i] = node.get(i).asDouble();
        return out;
    }

    /** The script, with its packages, in a cache directory named by its content: installed once per version. */
    private static Path installScript(BenchContext context) throws IOException, InterruptedException {
        var files = new LinkedHashMap<String, byte[]>();
        for (String file : SCRIPT) {
            try (InputStream in = E2bBench.class.getResourceAsStream("/e2b-bench/" + file)) {
                if (in == null) throw new IllegalStateException("the bench jar lacks e2b-bench/" + file);
                files.put(file, in.readAllBytes());
            }
        }
        Path dir = Path.of(System.getProperty("user.home"), ".cache", "stasis", "e2b-bench-" + digest(files));
        Files.createDirectories(dir);
        for (var file : files.entrySet()) Files.write(dir.resolve(file.getKey()), file.getValue());
        if (!Files.isDirectory(dir.resolve("node_modules/e2b"))) {
            context.progress().say("installing the e2b SDK into %s (npm ci)", dir);
            Path staging = Files.createTempDirectory(dir.getParent(), "e2b-bench-install-");
            for (String file : SCRIPT) Files.copy(dir.resolve(file), staging.resolve(file), StandardCopyOption.REPLACE_EXISTING);
            NodeScripts.install(staging);
            Files.move(staging.resolve("node_modules"), dir.resolve("node_modules"), StandardCopyOption.ATOMIC_MOVE);
            PrivateService.deleteTree(staging);
        }
        return dir;
    }

    private static String digest(Map<String, byte[]> files) {
        try {
            var sha = java.security.MessageDigest.getInstance("SHA-256");
            for (byte[] content : files.values()) sha.update(content);
            return HexFormat.of().formatHex(sha.digest()).substring(0, 16);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
