package io.stasis.cli;

import io.stasis.sdk.Preview;
import io.stasis.sdk.StasisJson;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis preview ls ID}: a sandbox's previews, oldest first. */
@Command(name = "ls", mixinStandardHelpOptions = true, description = "List a sandbox's previews, oldest first (tokens are not shown again).")
final class PreviewListCommand implements Callable<Integer> {
    @ParentCommand
    PreviewCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Override
    public Integer call() {
        var root = parent.root;
        List<Preview> previews = root.client().sandboxes().previews(id).list();
        if (root.json()) {
            root.io().out().println(StasisJson.writeList(previews));
            return ExitCodes.OK;
        }
        var table = Table.withHeaders("ID", "PORT", "ACCESS", "URL", "EXPIRES");
        for (Preview p : previews) {
            table.row(p.id(), p.port(), p.isPublic() ? "public" : "token", p.url(),
                    p.expiresAt() == null ? "never" : HumanFormat.time(p.expiresAt()));
        }
        root.io().out().print(table.render());
        return ExitCodes.OK;
    }
}
