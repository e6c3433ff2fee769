package io.stasis.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis forks ID}: the sandboxes forked from one, as {@code list} shows them. */
@Command(name = "forks", mixinStandardHelpOptions = true,
        description = "List the sandboxes forked from a sandbox (or from its checkpoints), oldest first.")
final class ForksCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Override
    public Integer call() {
        return root.printList(root.client().sandboxes().forks(id), ListCommand::render);
    }
}
