package io.stasis.cli;

import io.stasis.sdk.BackgroundProcess;
import io.stasis.sdk.ProcessRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * {@code stasis spawn ID [OPTIONS] -- CMD...}: starts a background process and prints its pid.
 * Unlike {@code exec}, options may follow the ID (as {@code kubectl exec} takes them), so
 * everything after {@code --} is the command.
 */
@Command(name = "spawn", mixinStandardHelpOptions = true,
        description = {"Start a command in the background in a sandbox and print its pid.",
                "It runs on with nobody attached; its output is kept (stasis logs), it survives hibernation "
                        + "and restarts of the service.",
                "Options may come before or after ID; everything after -- is the command. Without --, the "
                        + "command starts at the first word after ID that is not one of these options."})
final class SpawnCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Spec
    CommandSpec spec;

    @Mixin
    WhereOptions where;

    @Option(names = "--tag", paramLabel = "T", description = "A label to recognise it by in stasis ps.")
    String tag;

    @Option(names = "--keep-alive", description = "While it runs, the sandbox is not idle (not paused, hibernated "
            + "or stopped by the idle policy).")
    boolean keepAlive;

    @Option(names = "--keep-alive-for", paramLabel = "DURATION", converter = Durations.class,
            description = "Like --keep-alive, for at most this long: 30m, 2h.")
    Duration keepAliveFor;

    @Option(names = "--stdin", description = "Keep its standard input open for writes through the API "
            + "(otherwise it reads /dev/null).")
    boolean stdin;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "CMD", description = "The command and its arguments.")
    List<String> cmd = new ArrayList<>();

    @Override
    public Integer call() {
        List<String> argv = cmd;
        if (argv.isEmpty()) throw new ParameterException(spec.commandLine(), "Missing the command to run after ID");
        var request = ProcessRequest.builder(argv).cwd(where.cwd).env(where.env).user(where.user).tag(tag).keepAlive(keepAlive)
                .keepAliveFor(keepAliveFor).stdin(stdin);
        BackgroundProcess process = root.client().sandboxes().processes(id).start(request.build());
        if (root.json()) {
            root.printJson(process);
        } else {
            root.io().out().println(process.pid());
        }
        return ExitCodes.OK;
    }
}
