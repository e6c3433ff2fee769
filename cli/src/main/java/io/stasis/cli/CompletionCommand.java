package io.stasis.cli;

import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis completion bash|zsh}: prints the completion script picocli generates from the commands. */
@Command(name = "completion", mixinStandardHelpOptions = true,
        description = {"Print a shell completion script for stasis's commands and options.",
                "bash: stasis completion bash > /etc/bash_completion.d/stasis (or source it from ~/.bashrc). "
                        + "zsh: the same script through bashcompinit: source <(stasis completion zsh) in ~/.zshrc."})
final class CompletionCommand implements Callable<Integer> {
    enum Shell { bash, zsh }

    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "SHELL", description = "bash or zsh.")
    Shell shell;

    @Override
    public Integer call() {
        // picocli's script serves both: under zsh it loads bashcompinit itself.
        root.io().out().print(AutoComplete.bash("stasis", root.spec.commandLine()));
        return ExitCodes.OK;
    }
}
