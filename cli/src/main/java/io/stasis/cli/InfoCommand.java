package io.stasis.cli;

import io.stasis.sdk.Resources;
import io.stasis.sdk.Sandbox;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis info ID}. */
@Command(name = "info", aliases = "inspect", mixinStandardHelpOptions = true,
        description = "Show one sandbox.")
final class InfoCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Override
    public Integer call() {
        Sandbox sandbox = root.client().sandboxes().get(id);
        if (root.json()) {
            root.printJson(sandbox);
        } else {
            root.io().out().print(render(sandbox));
        }
        return ExitCodes.OK;
    }

    static String render(Sandbox s) {
        var table = Table.withoutHeaders()
                .row("ID", s.id())
                .row("NAME", s.name())
                .row("TEMPLATE", s.template())
                .row("STATE", s.stateReason() == null ? s.state() : s.state() + " (" + s.stateReason() + ")")
                .row("CREATED", HumanFormat.time(s.createdAt()));
        Resources r = s.resources();
        if (r != null) {
            table.row("CPUS", HumanFormat.number(r.cpus()))
                    .row("MEMORY", r.memoryMb() == null ? null : HumanFormat.size(r.memoryMb() * 1024L * 1024L))
                    .row("PIDS", r.pids());
        }
        pairs(table, "ENV", s.env());
        pairs(table, "METADATA", s.metadata());
        return table.render();
    }

    /** One row per pair, the label on the first only. */
    private static void pairs(Table table, String label, Map<String, String> pairs) {
        if (pairs.isEmpty()) {
            table.row(label, null);
            return;
        }
        boolean first = true;
        for (var e : pairs.entrySet()) {
            table.row(first ? label : "", e.getKey() + "=" + e.getValue());
            first = false;
        }
    }
}
