package io.stasis.bench;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.TemplateBuildRequest;
import io.stasis.sdk.TemplateInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Template builds and what a pre-booted template saves:
 * <ul>
 *   <li>a three-step build on {@code tiny} with a cold cache (its first step differs every time) and
 *       with a warm one (the same steps again), from the call until the template is ready, beside the
 *       same three commands done by hand in a new sandbox (create, three execs, delete), the floor;</li>
 *   <li>create -> a server inside answers: from a pre-booted template (the server runs from the
 *       template's memory checkpoint) and from a plain one with the same files (create, start the
 *       server, ask until it answers), for a server that starts at once and for one with about a
 *       second of work first: a fork pays a CRIU restore, which a fast start beats.</li>
 * </ul>
 */
final class TemplateBench implements Scenario {
    private static final Duration POLL = Duration.ofMillis(10);
    private static final Duration BUILD_WAIT = Duration.ofMinutes(5);
    private static final String SERVE = "exec httpd -f -p 8080 -h /srv";
    /** A server with about a second of work before it serves (a runtime loading, a cache warming). */
    private static final String SLOW_SERVE = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; " + SERVE;
    private static final String ASK = "wget -q -O- http://127.0.0.1:8080/ping";

    @Override
    public String name() {
        return "templates";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var service = context.service();
        var templates = service.client().templates();
        int n = context.counts().checkpoint();
        int warmup = context.counts().warmupOfSlowSeries();
        var figures = new ArrayList<Figure>();

        int[] round = {0};
        double[] cold = context.sampler().run("template build, cold cache", warmup, n, i -> timeBuild(context, "bench-cold",
                steps("cold " + (round[0]++) + " " + System.nanoTime())));
        figures.add(Figure.of("template_build.cold", name(), "ms", "POST /v1/templates of three run steps on tiny, none cached, "
                + "until the template is ready", Stats.of(cold)));
        timeBuild(context, "bench-warm", steps("warm"));
        double[] warm = context.sampler().run("template build, warm cache", warmup, n, i -> timeBuild(context, "bench-warm", steps("warm")));
        figures.add(Figure.of("template_build.warm", name(), "ms", "the same three steps again, all cached, until the new version is ready",
                Stats.of(warm)));
        double[] byHand = context.sampler().run("the same steps by hand", warmup, n, i -> {
            long start = System.nanoTime();
            Sandbox sandbox = service.create("tiny");
            for (String step : steps("hand " + i)) sandbox.exec("sh", "-c", step);
            sandbox.delete();
            return Format.millis(System.nanoTime() - start);
        });
        figures.add(Figure.of("floor.template_steps_by_hand", name(), "ms",
                "create a tiny sandbox, exec the three steps, delete it: the work a build cannot avoid", Stats.of(byHand)));

        String files = "mkdir -p /srv && echo pong > /srv/ping";
        buildAndWait(context, TemplateBuildRequest.builder("bench-plain").from("tiny").run(files).build());
        for (var server : List.of(new Server("fast", SERVE), new Server("slow", SLOW_SERVE))) {
            String prebooted = "bench-preboot-" + server.name();
            buildAndWait(context, TemplateBuildRequest.builder(prebooted).from("tiny").run(files).preboot(server.command(), ASK).build());
            double[] fork = context.sampler().run("create -> answer, pre-booted, " + server.name() + " start", warmup, n, i -> {
                long start = System.nanoTime();
                Sandbox sandbox = service.create(prebooted);
                askUntilAnswered(sandbox);
                double ms = Format.millis(System.nanoTime() - start);
                sandbox.delete();
                return ms;
            });
            figures.add(Figure.of("create_first_answer.prebooted_" + server.name(), name(), "ms", "create from a pre-booted template "
                    + "(busybox httpd, " + server.name() + " to start, running from its checkpoint) until a request inside gets its answer",
                    Stats.of(fork)));
            double[] plain = context.sampler().run("create -> answer, plain, " + server.name() + " start", warmup, n, i -> {
                long start = System.nanoTime();
                Sandbox sandbox = service.create("bench-plain");
                sandbox.processes().start("sh", "-c", server.command());
                askUntilAnswered(sandbox);
                double ms = Format.millis(System.nanoTime() - start);
                sandbox.delete();
                return ms;
            });
            figures.add(Figure.of("create_first_answer.plain_" + server.name(), name(), "ms", "create from a plain template with the "
                    + "same files, start the same server, ask until it answers", Stats.of(plain)));
            templates.delete(prebooted);
        }
        for (String template : List.of("bench-cold", "bench-warm", "bench-plain")) templates.delete(template);
        return ScenarioResult.of(figures);
    }

    private record Server(String name, String command) {
    }

    private static List<String> steps(String marker) {
        return List.of("echo '" + marker + "' > /marker", "mkdir -p /srv/data && seq 1 1000 > /srv/data/numbers", "sha256sum /srv/data/numbers > /sum");
    }

    private static double timeBuild(BenchContext context, String name, List<String> steps) {
        var request = TemplateBuildRequest.builder(name).from("tiny");
        steps.forEach(request::run);
        long start = System.nanoTime();
        buildAndWait(context, request.build());
        return Format.millis(System.nanoTime() - start);
    }

    private static void buildAndWait(BenchContext context, TemplateBuildRequest request) {
        var templates = context.service().client().templates();
        String name = templates.build(request).name();
        long deadline = System.nanoTime() + BUILD_WAIT.toNanos();
        while (true) {
            TemplateInfo info = templates.get(name);
            if (!info.isBuilding()) {
                if (info.isFailed()) throw new IllegalStateException("template " + name + " failed: " + info.failure());
                return;
            }
            if (System.nanoTime() > deadline) throw new IllegalStateException("template " + name + " not built in " + BUILD_WAIT);
            sleep();
        }
    }

    private static void askUntilAnswered(Sandbox sandbox) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!sandbox.exec("sh", "-c", ASK).stdout().equals("pong\n")) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("httpd in " + sandbox.id() + " never answered");
            sleep();
        }
    }

    private static void sleep() {
        try {
            Thread.sleep(POLL);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
