package io.stasis.cli;

import io.stasis.sdk.ExecOutputListener;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.ExecResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code stasis exec ID -- CMD...}: streams the command's stdout and stderr as they arrive and
 * exits with its exit code. Everything after the ID is the command, options included.
 */
@Command(name = "exec", mixinStandardHelpOptions = true,
        description = {"Run a command in a sandbox, streaming its output.",
                "Streams stdout and stderr as they arrive and exits with the command's exit code.",
                "Options go before ID; everything after ID (or after --) is the command. "
                        + "Use sh -c '...' for shell syntax."})
final class ExecCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Spec
    CommandSpec spec;

    @Option(names = "--cwd", paramLabel = "DIR", description = "Working directory (default /root).")
    String cwd;

    @Option(names = "--env", paramLabel = "K=V", description = "Extra environment variable (repeatable).")
    Map<String, String> env = new LinkedHashMap<>();

    @Option(names = "--timeout", paramLabel = "DURATION", converter = Durations.class,
            description = "Kill the command after this long: 500ms, 30s, 2m, 1h (default: the server's, 60s). "
                    + "Exit code 124 on timeout.")
    Duration timeout;

    @Option(names = "--stdin", description = "Send this process's standard input (read fully first) to the command.")
    boolean stdin;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "CMD", description = "The command and its arguments.")
    List<String> cmd = new ArrayList<>();

    @Override
    public Integer call() {
        List<String> argv = cmd.isEmpty() || !cmd.getFirst().equals("--") ? cmd : cmd.subList(1, cmd.size());
        if (argv.isEmpty()) throw new ParameterException(spec.commandLine(), "Missing the command to run after ID");
        var request = ExecRequest.builder(argv).cwd(cwd).env(env).timeout(timeout);
        if (stdin) request.stdin(readStdin());
        CliIo io = root.io();
        if (root.json()) {
            ExecResult result = root.client().sandboxes().exec(id, request.build());
            root.printJson(result);
            return result.timedOut() ? ExitCodes.TIMED_OUT : result.exitCode();
        }
        ExecResult result = root.client().sandboxes().execStream(id, request.build(),
                ExecOutputListener.writingTo(io.out(), io.err()));
        io.out().flush();
        if (result.timedOut()) {
            io.err().println("timed out");
            return ExitCodes.TIMED_OUT;
        }
        return result.exitCode();
    }

    private byte[] readStdin() {
        try {
            return root.io().in().readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read standard input: " + e.getMessage(), e);
        }
    }
}
