package io.stasis.cli;

import io.stasis.sdk.Preview;
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
        return root.printList(previews, PreviewListCommand::render);
    }

    private static String render(List<Preview> previews) {
        var table = Table.withHeaders("ID", "PORT", "ACCESS", "URL", "EXPIRES");
        for (Preview p : previews) {
            table.row(p.id(), p.port(), p.isPublic() ? "public" : "token", p.url(),
                    p.expiresAt() == null ? "never" : HumanFormat.time(p.expiresAt()));
        }
        return table.render();
    }
}
