package io.stasis.cli;

import io.stasis.sdk.Checkpoint;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis checkpoint-info CKPT}: one checkpoint, by id. */
@Command(name = "checkpoint-info", mixinStandardHelpOptions = true,
        description = "Show one checkpoint (any sandbox's) by its id.")
final class CheckpointInfoCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "CKPT", description = "Checkpoint id (ckpt_...).")
    String id;

    @Override
    public Integer call() {
        Checkpoint c = root.client().checkpoints().get(id);
        return root.print(c, () -> Table.withoutHeaders()
                .row("ID", c.id())
                .row("NAME", c.name())
                .row("SANDBOX", c.sandboxId())
                .row("MEMORY", c.hasMemory() ? "yes" : "no")
                .row("PURPOSE", c.purpose())
                .row("SIZE", c.hasMemory() ? HumanFormat.size(c.sizeBytes()) : null)
                .row("CREATED", HumanFormat.time(c.createdAt()))
                .render());
    }
}
