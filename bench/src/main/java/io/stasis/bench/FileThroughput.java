package io.stasis.bench;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.SandboxFiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * File write and read through the files API ({@code files().write(byte[])} / {@code read()}) of
 * random content, 1 MiB and 100 MiB, in MiB/s. Every read is checked against what was written
 * (untimed).
 */
final class FileThroughput implements Scenario {
    private static final double MIB = 1 << 20;

    @Override
    public String name() {
        return "files";
    }

    @Override
    public ScenarioResult run(BenchContext context) throws Exception {
        Sandbox sandbox = context.service().create("tiny");
        try {
            var figures = new ArrayList<Figure>();
            figures.addAll(measure(context, sandbox.files(), 1, "1MB", context.counts().warmup(), context.counts().file1mb()));
            figures.addAll(measure(context, sandbox.files(), 100, "100MB", context.counts().warmupOfSlowSeries(), context.counts().file100mb()));
            return ScenarioResult.of(figures);
        } finally {
            sandbox.delete();
        }
    }

    private List<Figure> measure(BenchContext context, SandboxFiles files, int mib, String label, int warmup, int n)
            throws Exception {
        byte[] content = new byte[mib << 20];
        new SplittableRandom(mib).nextBytes(content); // random: nothing on the way can compress it
        String path = "/root/bench-" + label + ".bin";
        double[] writes = new double[n];
        double[] reads = context.sampler().run("file write+read " + label, warmup, n, i -> {
            long start = System.nanoTime();
            files.write(path, content);
            long written = System.nanoTime();
            byte[] back = files.read(path);
            long end = System.nanoTime();
            if (!Arrays.equals(back, content)) throw new IllegalStateException("read " + path + " differs from what was written");
            if (i >= 0) writes[i] = mib / ((written - start) / 1e9);
            return mib / ((end - written) / 1e9);
        });
        files.delete(path);
        return List.of(
                Figure.of("file_write." + label, name(), "MiB/s", "PUT .../files of " + mib + " MiB of random bytes (SDK write(byte[]))",
                        Stats.of(writes)),
                Figure.of("file_read." + label, name(), "MiB/s", "GET .../files of the same " + mib + " MiB (SDK read())",
                        Stats.of(reads)));
    }
}
