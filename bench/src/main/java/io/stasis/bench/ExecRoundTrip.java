package io.stasis.bench;

import io.stasis.sdk.ExecResult;
import io.stasis.sdk.Sandbox;
import java.util.List;

/** Exec round trip of {@code true} on one running {@code tiny} sandbox, through the API. */
final class ExecRoundTrip implements Scenario {
    /** The goal, in milliseconds. */
    static final double TARGET_MS = 5;

    @Override
    public String name() {
        return "exec";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        Sandbox sandbox = context.service().create("tiny");
        try {
            double[] samples = context.sampler().run("exec true", context.counts().warmup(), context.counts().exec(), i -> {
                long start = System.nanoTime();
                ExecResult result = sandbox.exec("true");
                long end = System.nanoTime();
                if (result.exitCode() != 0) throw new IllegalStateException("true failed: " + result);
                return Format.millis(end - start);
            });
            return ScenarioResult.of(List.of(Figure.of("exec_true", name(), "ms",
                    "POST /v1/sandboxes/{id}/exec of `true` on a running tiny sandbox until its result is back",
                    Stats.of(samples)).withTarget(Target.atMost(TARGET_MS))));
        } finally {
            sandbox.delete();
        }
    }
}
