package io.stasis.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis rm-checkpoint CKPT...}: deletes each; one failure does not stop the others. */
@Command(name = "rm-checkpoint", mixinStandardHelpOptions = true,
        description = {"Delete checkpoints.",
                "Sandboxes forked from them keep their files. Prints each deleted id; goes on past failures "
                        + "and exits with the first failure's code."})
final class RmCheckpointCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(arity = "1..*", paramLabel = "CKPT", description = "Checkpoint ids (ckpt_...).")
    List<String> ids = new ArrayList<>();

    @Override
    public Integer call() {
        return DeleteEach.run(root, ids, id -> root.client().checkpoints().delete(id));
    }
}
