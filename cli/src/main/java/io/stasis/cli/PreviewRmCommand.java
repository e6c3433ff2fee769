package io.stasis.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis preview rm ID PREVIEW...}: revokes each; one failure does not stop the others. */
@Command(name = "rm", mixinStandardHelpOptions = true,
        description = {"Revoke previews: no request passes any more and open connections are closed.",
                "Prints each revoked id; goes on past failures and exits with the first failure's code."})
final class PreviewRmCommand implements Callable<Integer> {
    @ParentCommand
    PreviewCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "PREVIEW", description = "Preview ids (prv_...).")
    List<String> previews = new ArrayList<>();

    @Override
    public Integer call() {
        var calls = parent.root.client().sandboxes().previews(id);
        return DeleteEach.run(parent.root, previews, calls::delete);
    }
}
