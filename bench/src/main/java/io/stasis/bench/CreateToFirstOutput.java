package io.stasis.bench;

import io.stasis.sdk.ExecResult;
import io.stasis.sdk.Sandbox;
import java.util.ArrayList;
import java.util.List;

/**
 * Create -> first exec output, per template: from the create call until {@code exec(echo ...)}
 * has returned its output. Each sandbox is deleted afterwards, untimed. The two halves (the create
 * call alone, the first exec alone) are reported too, to show where the time goes.
 */
final class CreateToFirstOutput implements Scenario {
    static final List<String> TEMPLATES = List.of("tiny", "base");
    /** The goal for {@code tiny}, in milliseconds. */
    static final double TINY_TARGET_MS = 50;
    private static final String WORD = "stasis-bench";

    @Override
    public String name() {
        return "create";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        var figures = new ArrayList<Figure>();
        for (String template : TEMPLATES) figures.addAll(measure(context, template));
        return ScenarioResult.of(figures);
    }

    private List<Figure> measure(BenchContext context, String template) throws Exception {
        int n = context.counts().create();
        double[] createCall = new double[n];
        double[] firstExec = new double[n];
        double[] total = context.sampler().run("create -> first output (" + template + ")", context.counts().warmup(), n, i -> {
            long start = System.nanoTime();
            Sandbox sandbox = context.service().create(template);
            long created = System.nanoTime();
            ExecResult result;
            try {
                result = sandbox.exec("echo", WORD);
            } catch (RuntimeException e) {
                sandbox.delete();
                throw e;
            }
            long end = System.nanoTime();
            sandbox.delete();
            if (!result.stdout().equals(WORD + "\n"))
                throw new IllegalStateException("unexpected output of echo in " + template + ": " + result);
            if (i >= 0) {
                createCall[i] = Format.millis(created - start);
                firstExec[i] = Format.millis(end - created);
            }
            return Format.millis(end - start);
        });
        var main = Figure.of("create_first_output." + template, name(), "ms",
                "POST /v1/sandboxes (template " + template + ") until exec(echo) has returned its output", Stats.of(total));
        if (template.equals("tiny")) main = main.withTarget(Target.atMost(TINY_TARGET_MS));
        return List.of(main,
                Figure.of("create_call." + template, name(), "ms", "the create call alone (returns with the sandbox running)",
                        Stats.of(createCall)),
                Figure.of("first_exec." + template, name(), "ms", "the first exec(echo) alone, right after the create",
                        Stats.of(firstExec)));
    }
}
