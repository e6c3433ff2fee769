package io.stasis.cli;

import io.stasis.sdk.ProcessInfo;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis kill [-s SIGNAL] ID PID}: signals a background process. */
@Command(name = "kill", mixinStandardHelpOptions = true,
        description = {"Send a signal to a background process (default TERM).",
                "Fails with invalid_state when it has already ended."})
final class KillCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Option(names = {"-s", "--signal"}, paramLabel = "SIGNAL", defaultValue = "TERM",
            description = "Signal name: TERM, KILL, INT, HUP, QUIT, USR1... (SIGTERM works too; default ${DEFAULT-VALUE}).")
    String signal;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", paramLabel = "PID", description = "The process's pid (stasis ps).")
    long pid;

    @Override
    public Integer call() {
        ProcessInfo process = root.client().sandboxes().processes(id).get(pid).signal(signal);
        if (root.json()) root.printJson(process);
        return ExitCodes.OK;
    }
}
