package io.stasis.cli;

import io.stasis.sdk.FileInfo;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis files ls ID [PATH]}: a directory's entries, sorted by name. */
@Command(name = "ls", mixinStandardHelpOptions = true, description = "List a directory of a sandbox, sorted by name.")
final class FilesListCommand implements Callable<Integer> {
    @ParentCommand
    FilesCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", arity = "0..1", paramLabel = "PATH", description = "A directory (default /).")
    String path = "/";

    @Override
    public Integer call() {
        var root = parent.root;
        return root.printList(root.client().sandboxes().files(id).list(path), FilesListCommand::render);
    }

    static String render(List<FileInfo> entries) {
        var table = Table.withHeaders("TYPE", "MODE", "SIZE", "MODIFIED", "NAME");
        for (FileInfo f : entries) {
            table.row(f.type().wireName(), f.mode(), f.isFile() ? HumanFormat.size(f.size()) : null,
                    HumanFormat.time(f.modifiedAt()), FilesCommand.name(f));
        }
        return table.render();
    }
}
