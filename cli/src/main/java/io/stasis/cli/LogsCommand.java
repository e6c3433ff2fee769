package io.stasis.cli;

import io.stasis.sdk.BackgroundProcess;
import io.stasis.sdk.ProcessOutput;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis logs [-f] ID PID}: a background process's output, its stdout to stdout and stderr to stderr. */
@Command(name = "logs", mixinStandardHelpOptions = true,
        description = {"Print what a background process has written: its stdout to stdout, its stderr to stderr.",
                "With --follow, keep printing as it writes until it ends, then exit with its exit code "
                        + "(a dropped connection is resumed where it was)."})
final class LogsCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Option(names = {"-f", "--follow"}, description = "Keep printing until the process ends; exit with its exit code.")
    boolean follow;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", paramLabel = "PID", description = "The process's pid (stasis ps).")
    long pid;

    @Override
    public Integer call() {
        CliIo io = root.io();
        BackgroundProcess process = root.client().sandboxes().processes(id).get(pid);
        var printer = new OutputPrinter(io);
        if (follow) {
            var end = process.follow(printer);
            io.out().flush();
            return ProcessExit.code(end, io);
        }
        long stdoutOffset = 0;
        long stderrOffset = 0;
        while (true) {
            ProcessOutput output = process.output(stdoutOffset, stderrOffset);
            if (output.stdoutStart() > stdoutOffset) printer.onDropped("stdout", stdoutOffset, output.stdoutStart());
            if (output.stderrStart() > stderrOffset) printer.onDropped("stderr", stderrOffset, output.stderrStart());
            printer.onStdout(output.stdoutBytes());
            printer.onStderr(output.stderrBytes());
            if (output.stdoutOffset() == stdoutOffset && output.stderrOffset() == stderrOffset) break;
            stdoutOffset = output.stdoutOffset();
            stderrOffset = output.stderrOffset();
        }
        io.out().flush();
        return ExitCodes.OK;
    }
}
