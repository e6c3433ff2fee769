package io.stasis.cli;

import io.stasis.sdk.Preview;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis preview info ID PREVIEW}: one preview (its token is not shown again). */
@Command(name = "info", mixinStandardHelpOptions = true, description = "Show one preview of a sandbox (its token is not shown again).")
final class PreviewInfoCommand implements Callable<Integer> {
    @ParentCommand
    PreviewCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", paramLabel = "PREVIEW", description = "Preview id (prv_...).")
    String preview;

    @Override
    public Integer call() {
        var root = parent.root;
        Preview p = root.client().sandboxes().previews(id).get(preview);
        return root.print(p, () -> PreviewCreateCommand.render(p));
    }
}
