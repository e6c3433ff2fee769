package io.stasis.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis rm ID...}: deletes each; one failure does not stop the others. */
@Command(name = "rm", aliases = "delete", mixinStandardHelpOptions = true,
        description = {"Delete sandboxes.",
                "Every process ends and the filesystem is removed. Prints each deleted id; goes on past "
                        + "failures and exits with the first failure's code."})
final class RmCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(arity = "1..*", paramLabel = "ID", description = "Sandbox ids or names.")
    List<String> ids = new ArrayList<>();

    @Override
    public Integer call() {
        return DeleteEach.run(root, ids, id -> root.client().sandboxes().delete(id));
    }
}
