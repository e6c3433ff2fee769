package io.stasis.cli;

import io.stasis.sdk.ProcessInfo;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis wait ID PID}: waits for a background process and exits with its exit code. */
@Command(name = "wait", mixinStandardHelpOptions = true,
        description = {"Wait until a background process ends and exit with its exit code.",
                "With --timeout, exit with 124 if it still runs by then (it keeps running)."})
final class WaitCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = Durations.class,
            description = "Wait at most this long: 30s, 10m, 2h (default: as long as it takes).")
    Duration timeout;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", paramLabel = "PID", description = "The process's pid (stasis ps).")
    long pid;

    @Override
    public Integer call() {
        ProcessInfo process = root.client().sandboxes().processes(id).get(pid).waitFor(timeout);
        if (root.json()) root.printJson(process);
        if (process.isRunning()) {
            root.io().err().println("process " + pid + " still runs after " + HumanFormat.duration(timeout));
            return ExitCodes.TIMED_OUT;
        }
        return ProcessExit.code(process, root.io());
    }
}
