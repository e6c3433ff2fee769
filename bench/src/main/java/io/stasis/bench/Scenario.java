package io.stasis.bench;

/** One thing the issue asks to measure; its {@link #name()} is what {@code --only} takes. */
sealed interface Scenario permits CreateToFirstOutput, ExecRoundTrip, FileThroughput, IdleMemory, RawFloors, PauseResume,
        HibernateResume, ForkTen, CheckpointFork, OutputThroughput, OutputLatency, FileEventLatency, ConcurrentFollowers,
        PreviewOverhead, EgressOverhead, BlobThroughput, BlobDedup, BlobRestore, CliCalls, FirstCalls, StandbyResume, SeedScenario, Lifecycles, Crowd,
        TemplateBench, NodesBench, E2bBench {
    String name();

    /** Runs against the private service. Every sandbox it creates is deleted before it returns. */
    ScenarioResult run(BenchContext context) throws Exception;
}
