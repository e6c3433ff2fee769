package io.stasis.cli;

import io.stasis.sdk.Checkpoint;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis checkpoints ID}: a sandbox's checkpoints, oldest first. */
@Command(name = "checkpoints", mixinStandardHelpOptions = true,
        description = {"List a sandbox's checkpoints, oldest first.",
                "SIZE is the process image (files-only checkpoints have none)."})
final class CheckpointsCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Override
    public Integer call() {
        return root.printList(root.client().sandboxes().checkpoints(id), CheckpointsCommand::render);
    }

    static String render(List<Checkpoint> checkpoints) {
        var table = Table.withHeaders("ID", "NAME", "MEMORY", "PURPOSE", "SIZE", "CREATED");
        for (Checkpoint c : checkpoints) {
            table.row(c.id(), c.name(), c.hasMemory() ? "yes" : "no", c.purpose(),
                    c.hasMemory() ? HumanFormat.size(c.sizeBytes()) : null, HumanFormat.time(c.createdAt()));
        }
        return table.render();
    }
}
