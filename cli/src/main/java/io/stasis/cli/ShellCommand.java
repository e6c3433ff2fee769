package io.stasis.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis shell ID}: a login shell on a terminal in the sandbox, with this terminal attached. */
@Command(name = "shell", mixinStandardHelpOptions = true,
        description = {"Open a login shell in a sandbox (bash where it has it) on a terminal.",
                "Your terminal is in raw mode meanwhile: every key, Ctrl-C included, goes to the sandbox; "
                        + "exit or Ctrl-D ends it and stasis exits with the shell's exit code.",
                "Piped input is typed into the shell, followed by Ctrl-D, e.g. printf 'make test\\n' | stasis shell ID"})
final class ShellCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Override
    public Integer call() {
        root.io().requireLocal("a shell needs this process's terminal");
        return new TerminalSession(root, id, List.of(), true).run();
    }
}
