package io.stasis.cli;

import io.stasis.sdk.EgressPolicy;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis network set ID [--default allow|deny] [--allow LIST] [--deny LIST]}: prints the network with the new policy. */
@Command(name = "set", mixinStandardHelpOptions = true,
        description = {"Replace a sandbox's whole egress policy and show the result.",
                "The policy becomes exactly what the options say: entries not given again are dropped, "
                        + "and the default is deny unless --default allow. New connections follow it at once; "
                        + "open ones continue."})
final class NetworkSetCommand implements Callable<Integer> {
    @ParentCommand
    NetworkCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Option(names = "--default", paramLabel = "allow|deny", converter = EgressOptions.DefaultConverter.class,
            description = "What happens to destinations no entry names (default: deny).")
    EgressPolicy.Action defaultAction;

    @Mixin
    EgressOptions egress;

    @Override
    public Integer call() {
        var root = parent.root;
        var network = root.client().sandboxes().updateNetwork(id, egress.policy(defaultAction));
        NetworkShowCommand.print(root, network);
        return ExitCodes.OK;
    }
}
