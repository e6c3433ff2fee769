package io.stasis.cli;

import io.stasis.sdk.Checkpoint;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis checkpoints [ID]}: a sandbox's checkpoints, or all of the tenant's, oldest first. */
@Command(name = "checkpoints", mixinStandardHelpOptions = true,
        description = {"List a sandbox's checkpoints, or without ID every checkpoint of your tenant, oldest first.",
                "SIZE is the process image (files-only checkpoints have none); DURABLE says whether it is in the blob "
                        + "store (pending: being uploaded); STORED is what its upload added there after dedup."})
final class CheckpointsCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", arity = "0..1", paramLabel = "ID", description = "Sandbox id or name (default: every checkpoint).")
    String id;

    @picocli.CommandLine.Option(names = "--store", description = "The durable checkpoints in the server's blob store instead, written "
            + "by any server sharing it: what create --from-checkpoint can restore here.")
    boolean store;

    @Override
    public Integer call() {
        if (store && id != null) throw new UsageException("--store lists every durable checkpoint: give no ID with it");
        var list = store ? root.client().checkpoints().listInStore()
                : id == null ? root.client().checkpoints().list() : root.client().sandboxes().checkpoints(id);
        return root.printList(list, CheckpointsCommand::render);
    }

    static String render(List<Checkpoint> checkpoints) {
        var table = Table.withHeaders("ID", "NAME", "MEMORY", "PURPOSE", "SIZE", "DURABLE", "STORED", "CREATED");
        for (Checkpoint c : checkpoints) {
            String durable = c.durable() ? "yes" : c.uploadState() == null || c.uploadState().equals("none") ? "no" : c.uploadState();
            table.row(c.id(), c.name(), c.hasMemory() ? "yes" : "no", c.purpose(),
                    c.hasMemory() ? HumanFormat.size(c.sizeBytes()) : null, durable,
                    c.storedBytes() == null ? null : HumanFormat.size(c.storedBytes()), HumanFormat.time(c.createdAt()));
        }
        return table.render();
    }
}
