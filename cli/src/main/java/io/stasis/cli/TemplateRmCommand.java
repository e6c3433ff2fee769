package io.stasis.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis template rm NAME...}: deletes each; one failure does not stop the others. */
@Command(name = "rm", mixinStandardHelpOptions = true,
        description = {"Delete templates you built, every version and cached step of each. Refused (exit 5) while sandboxes "
                + "made from one exist (the error names them), while it is building, and for the service's own templates.",
                "Prints each deleted name; goes on past failures and exits with the first failure's code."})
final class TemplateRmCommand implements Callable<Integer> {
    @ParentCommand
    TemplateCommand parent;

    @Parameters(index = "0..*", arity = "1..*", paramLabel = "NAME", description = "Template names.")
    List<String> names = new ArrayList<>();

    @Override
    public Integer call() {
        var templates = parent.root.client().templates();
        return DeleteEach.run(parent.root, names, templates::delete);
    }
}
