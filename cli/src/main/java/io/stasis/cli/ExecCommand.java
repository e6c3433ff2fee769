package io.stasis.cli;

import io.stasis.sdk.ExecOutputListener;
import io.stasis.sdk.ExecRequest;
import io.stasis.sdk.ExecResult;
import io.stasis.sdk.ProcessRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code stasis exec ID -- CMD...}: streams the command's stdout and stderr as they arrive and
 * exits with its exit code. Everything after the ID is the command, options included. With
 * {@code -t} the command runs on a terminal ({@link TerminalSession}); with {@code -i} alone its
 * stdin is fed as it comes ({@link InteractiveExec}).
 */
@Command(name = "exec", mixinStandardHelpOptions = true,
        description = {"Run a command in a sandbox, streaming its output.",
                "Streams stdout and stderr as they arrive and exits with the command's exit code.",
                "Options go before ID; everything after ID (or after --) is the command. "
                        + "Use sh -c '...' for shell syntax.",
                "-it runs it on a terminal with your keyboard attached (an editor, a REPL, top); "
                        + "-i alone feeds it stdin as it comes, e.g. from a pipe that stays open."})
final class ExecCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Spec
    CommandSpec spec;

    @Mixin
    WhereOptions where;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = Durations.class,
            description = "Kill the command after this long: 500ms, 30s, 2m, 1h (default: the server's, 60s). "
                    + "Exit code 124 on timeout.")
    Duration timeout;

    @Option(names = "--stdin", description = "Send this process's standard input (read fully first) to the command.")
    boolean stdin;

    @Option(names = {"-i", "--interactive"},
            description = "Keep the command's stdin open and send ours to it as it comes (end of input closes it).")
    boolean interactive;

    @Option(names = {"-t", "--tty"},
            description = "Run the command on a terminal (its output is then all stdout); with -i, in raw mode "
                    + "when ours is a terminal. Not with --cwd, --env, --timeout or --stdin.")
    boolean tty;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "CMD", description = "The command and its arguments.")
    List<String> cmd = new ArrayList<>();

    @Override
    public Integer call() {
        List<String> argv = cmd.isEmpty() || !cmd.getFirst().equals("--") ? cmd : cmd.subList(1, cmd.size());
        if (argv.isEmpty()) throw new ParameterException(spec.commandLine(), "Missing the command to run after ID");
        if (tty || interactive) root.io().requireLocal("-t and -i need this process's terminal and signals");
        if (tty) {
            refuse("-t", "a terminal starts the command as given (use sh -c 'cd DIR && X=1 CMD')",
                    "--cwd", "--env", "--user", "--timeout", "--stdin", "--json");
            return new TerminalSession(root, id, argv, interactive).run();
        }
        if (interactive) {
            refuse("-i", "the command runs as a background process fed from stdin, without a time limit",
                    "--timeout", "--stdin", "--json");
            return new InteractiveExec(root, id).run(ProcessRequest.builder(argv).cwd(where.cwd).env(where.env).user(where.user));
        }
        var request = ExecRequest.builder(argv).cwd(where.cwd).env(where.env).user(where.user).timeout(timeout);
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

    /** Fails when any of the {@code incompatible} options was given with {@code mode}. */
    private void refuse(String mode, String why, String... incompatible) {
        var given = new LinkedHashMap<String, Boolean>();
        given.put("--cwd", where.cwd != null);
        given.put("--env", !where.env.isEmpty());
        given.put("--user", where.user != null);
        given.put("--timeout", timeout != null);
        given.put("--stdin", stdin);
        given.put("--json", root.json());
        List<String> conflicting = Arrays.stream(incompatible).filter(given::get).toList();
        if (!conflicting.isEmpty()) {
            throw new ParameterException(spec.commandLine(),
                    String.join(" and ", conflicting) + " cannot be used with " + mode + ": " + why);
        }
    }

    private byte[] readStdin() {
        try {
            return root.io().in().readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read standard input: " + e.getMessage(), e);
        }
    }
}
