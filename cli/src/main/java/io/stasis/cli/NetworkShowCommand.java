package io.stasis.cli;

import io.stasis.sdk.NetworkInfo;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis network show ID}. */
@Command(name = "show", mixinStandardHelpOptions = true,
        description = "Show a sandbox's address, resolver, egress policy and how many connections it refused.")
final class NetworkShowCommand implements Callable<Integer> {
    @ParentCommand
    NetworkCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Override
    public Integer call() {
        print(parent.root, parent.root.client().sandboxes().network(id));
        return ExitCodes.OK;
    }

    /** The network as JSON with {@code --json}, else as a table. */
    static void print(StasisCommand root, NetworkInfo network) {
        if (root.json()) {
            root.printJson(network);
        } else {
            root.io().out().print(render(network));
        }
    }

    static String render(NetworkInfo n) {
        var table = Table.withoutHeaders().row("SANDBOX", n.sandboxId());
        if (n.enabled()) {
            table.row("ADDRESS", n.address()).row("GATEWAY", n.gateway()).row("DNS", n.dns());
        } else {
            table.row("NETWORK", "none (loopback only; the service runs with --network none)");
        }
        table.row("DEFAULT", n.egress().defaultAction().wireName());
        list(table, "ALLOW", n.egress().allow());
        list(table, "DENY", n.egress().deny());
        return table.row("DENIED", n.deniedConnections()).render();
    }

    /** One row per entry, the label on the first only. */
    private static void list(Table table, String label, List<String> entries) {
        if (entries.isEmpty()) table.row(label, null);
        for (int i = 0; i < entries.size(); i++) table.row(i == 0 ? label : "", entries.get(i));
    }
}
