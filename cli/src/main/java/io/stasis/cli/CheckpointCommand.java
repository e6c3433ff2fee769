package io.stasis.cli;

import io.stasis.sdk.Checkpoint;
import io.stasis.sdk.CheckpointRequest;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis checkpoint ID}: prints the new checkpoint's id. */
@Command(name = "checkpoint", mixinStandardHelpOptions = true,
        description = {"Take a checkpoint of a sandbox and print its id.",
                "With memory (the default) it also holds the running processes, which keep running; "
                        + "--no-memory takes the files only (the only kind a stopped sandbox can have)."})
final class CheckpointCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Option(names = "--name", paramLabel = "N", description = "A name for the checkpoint.")
    String name;

    // Picocli's recipe for a negatable option that is on by default: default and fallback both true.
    @Option(names = "--memory", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Keep the processes and their memory (default); --no-memory: the files only.")
    boolean memory;

    @Option(names = "--durable", description = "Return only once the checkpoint is in the blob store, restorable on any "
            + "server sharing it (otherwise it is uploaded in the background).")
    boolean durable;

    @Option(names = "--spares", paramLabel = "N", description = "Keep N forks of it restored ahead, in standby, so that "
            + "'stasis fork ID --checkpoint C' only thaws one (memory checkpoints; default none).")
    Integer spares;

    @Override
    public Integer call() {
        Checkpoint checkpoint;
        try (var progress = Progress.ticking(root, "checkpointing " + id)) {
            checkpoint = root.client().sandboxes().checkpoint(id, new CheckpointRequest(name, memory, durable ? Boolean.TRUE : null, spares));
        }
        if (root.json()) {
            root.printJson(checkpoint);
        } else {
            root.io().out().println(checkpoint.id());
        }
        return ExitCodes.OK;
    }
}
