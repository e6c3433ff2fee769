package io.stasis.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/** {@code stasis template ls}: what {@code stasis templates} lists. */
@Command(name = "ls", mixinStandardHelpOptions = true, description = "List the templates: the service's and yours (as stasis templates does).")
final class TemplateListCommand implements Callable<Integer> {
    @ParentCommand
    TemplateCommand parent;

    @Override
    public Integer call() {
        var root = parent.root;
        return root.printList(root.client().templates().list(), TemplatesCommand::render);
    }
}
