package io.stasis.cli;

import io.stasis.sdk.ForkRequest;
import io.stasis.sdk.Sandbox;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis fork ID}: prints the new sandboxes' ids, one per line. */
@Command(name = "fork", mixinStandardHelpOptions = true,
        description = {"Fork a sandbox and print the new ids, one per line.",
                "Each fork has its own files, namespaces and hostname and, from a memory checkpoint or the "
                        + "current state, the running processes. All or nothing."})
final class ForkCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Option(names = "--checkpoint", paramLabel = "CKPT", description = "Fork from this checkpoint (default: the current state).")
    String checkpoint;

    @Option(names = "--count", paramLabel = "N", description = "How many forks, 1-100 (default 1).")
    Integer count;

    @Option(names = "--name", paramLabel = "N", description = "Name of the fork; several get N-1, N-2, ...")
    String name;

    @Override
    public Integer call() {
        var request = ForkRequest.builder().checkpoint(checkpoint).name(name);
        if (count != null) {
            try {
                request.count(count);
            } catch (IllegalArgumentException e) {
                throw new UsageException("--count: " + e.getMessage());
            }
        }
        List<Sandbox> forks;
        try (var progress = Progress.ticking(root, "forking " + id)) {
            forks = root.client().sandboxes().fork(id, request.build());
        }
        return root.printList(forks, list -> list.stream().map(fork -> fork.id() + "\n").collect(Collectors.joining()));
    }
}
