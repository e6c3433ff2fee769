package io.stasis.server;

import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * RandomKillIT's kills of the service and of the tools (a {@code runsc} command here) on gVisor
 * sandboxes. CI kills fewer times per operation than under runc (a gVisor restore takes twice as
 * long); the seed changes each run, and {@code -Dstasis.kill.trials=N} sets the count as there.
 * Each operation gets a fresh subject: under runsc 2024-07 a sandbox's saves grow with every process
 * it has started, and its sentry's memory with every save (docs/BENCHMARKS.md).
 */
@RandomKillIT.OnRuntime(value = "gvisor", trials = 3, toolTrials = 2)
class RandomKillGvisorIT extends RandomKillIT {
    @Override
    @Test
    @Disabled("a template build runs no sandbox runtime: RandomKillIT covers it")
    void aKillDuringATemplateBuildLeavesTheTemplateWhole() {
    }

    @Override
    @Test
    @Disabled("every operation at once is some thirty gVisor sentries restoring on the host at a time, more than a 2-core CI host holds")
    void aKillDuringEveryOperationAtOnceLeavesEverySandboxDefinedUsableAndWhole() {
    }
}
