package io.stasis.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/** {@code stasis metrics}: the server's Prometheus metrics, as the server sends them. */
@Command(name = "metrics", mixinStandardHelpOptions = true,
        description = {"Print the server's Prometheus metrics (text exposition format 0.0.4).",
                "Needs the root key, unless the server runs with --metrics-public. The format is Prometheus's own:",
                "--json is refused (exit 2)."})
final class MetricsCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Override
    public Integer call() {
        root.printVerbatim("the metrics are Prometheus text", () -> root.client(false).metrics());
        return ExitCodes.OK;
    }
}
