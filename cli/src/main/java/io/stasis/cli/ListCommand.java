package io.stasis.cli;

import io.stasis.sdk.ListSandboxesRequest;
import io.stasis.sdk.Sandbox;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

/** {@code stasis list}: every sandbox (all pages), oldest first. */
@Command(name = "list", aliases = "ls", mixinStandardHelpOptions = true,
        description = "List sandboxes, oldest first.")
final class ListCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Option(names = "--state", paramLabel = "S", description = "Only sandboxes in this state: running, paused, hibernated, stopped.")
    String state;

    @Option(names = "--meta", paramLabel = "K=V", description = "Only sandboxes with this label (repeatable; all must match).")
    Map<String, String> metadata = new LinkedHashMap<>();

    @Override
    public Integer call() {
        var request = ListSandboxesRequest.builder().state(state);
        metadata.forEach(request::metadata);
        List<Sandbox> sandboxes = root.client().sandboxes().list(request.build()).stream().toList();
        return root.printList(sandboxes, ListCommand::render);
    }

    static String render(List<Sandbox> sandboxes) {
        var table = Table.withHeaders("ID", "NAME", "TEMPLATE", "STATE", "CREATED");
        for (Sandbox s : sandboxes) {
            table.row(s.id(), s.name(), s.template(), s.state(), HumanFormat.time(s.createdAt()));
        }
        return table.render();
    }
}
