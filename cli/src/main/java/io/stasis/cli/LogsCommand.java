package io.stasis.cli;

import io.stasis.sdk.BackgroundProcess;
import io.stasis.sdk.ExecOutputListener;
import io.stasis.sdk.ProcessInfo;
import io.stasis.sdk.ProcessOutput;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis logs [-f] ID PID}: a background process's output, its stdout to stdout and stderr to stderr. */
@Command(name = "logs", mixinStandardHelpOptions = true,
        description = {"Print what a background process has written: its stdout to stdout, its stderr to stderr.",
                "With --follow, keep printing as it writes until it ends, then exit with its exit code "
                        + "(a dropped connection is resumed where it was). Without it, --json prints one object: "
                        + "stdout and stderr as text, the bytes the server had dropped of each, and the process."})
final class LogsCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Option(names = {"-f", "--follow"}, description = "Keep printing until the process ends; exit with its exit code.")
    boolean follow;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", paramLabel = "PID", description = "The process's pid (stasis ps).")
    long pid;

    /** What {@code logs --json} prints. */
    record Logs(String stdout, String stderr, long stdoutDroppedBytes, long stderrDroppedBytes, ProcessInfo process) {
    }

    @Override
    public Integer call() {
        CliIo io = root.io();
        if (follow && root.json()) {
            throw new UsageException("logs -f streams the raw output: drop --json, or drop -f for one JSON object");
        }
        BackgroundProcess process = root.client().sandboxes().processes(id).get(pid);
        if (root.json()) {
            root.printJson(collect(process));
            return ExitCodes.OK;
        }
        var printer = new OutputPrinter(io);
        if (follow) {
            var end = process.follow(printer);
            io.out().flush();
            return ProcessExit.code(end, io);
        }
        readAll(process, printer);
        io.out().flush();
        return ExitCodes.OK;
    }

    /** Hands {@code listener} all the output there is now; returns the process as of the last read. */
    private static ProcessInfo readAll(BackgroundProcess process, ExecOutputListener listener) {
        long stdoutOffset = 0;
        long stderrOffset = 0;
        while (true) {
            ProcessOutput output = process.output(stdoutOffset, stderrOffset);
            if (output.stdoutStart() > stdoutOffset) listener.onDropped("stdout", stdoutOffset, output.stdoutStart());
            if (output.stderrStart() > stderrOffset) listener.onDropped("stderr", stderrOffset, output.stderrStart());
            listener.onStdout(output.stdoutBytes());
            listener.onStderr(output.stderrBytes());
            if (output.stdoutOffset() == stdoutOffset && output.stderrOffset() == stderrOffset) return output.process();
            stdoutOffset = output.stdoutOffset();
            stderrOffset = output.stderrOffset();
        }
    }

    private static Logs collect(BackgroundProcess process) {
        var stdout = new ByteArrayOutputStream();
        var stderr = new ByteArrayOutputStream();
        long[] dropped = new long[2]; // stdout, stderr
        ProcessInfo info = readAll(process, new ExecOutputListener() {
            @Override
            public void onStdout(byte[] chunk) {
                stdout.writeBytes(chunk);
            }

            @Override
            public void onStderr(byte[] chunk) {
                stderr.writeBytes(chunk);
            }

            @Override
            public void onDropped(String stream, long from, long to) {
                dropped["stdout".equals(stream) ? 0 : 1] += to - from;
            }
        });
        return new Logs(stdout.toString(StandardCharsets.UTF_8), stderr.toString(StandardCharsets.UTF_8),
                dropped[0], dropped[1], info);
    }
}
