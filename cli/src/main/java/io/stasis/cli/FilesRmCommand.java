package io.stasis.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis files rm ID PATH...}: deletes each; one failure does not stop the others. */
@Command(name = "rm", mixinStandardHelpOptions = true,
        description = {"Delete files, symlinks and empty directories in a sandbox (-r: directories with all below).",
                "Prints each deleted path; goes on past failures and exits with the first failure's code."})
final class FilesRmCommand implements Callable<Integer> {
    @ParentCommand
    FilesCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "PATH", description = "Paths in the sandbox.")
    List<String> paths = new ArrayList<>();

    @Option(names = {"-r", "--recursive"}, description = "Also delete non-empty directories.")
    boolean recursive;

    @Override
    public Integer call() {
        var files = parent.root.client().sandboxes().files(id);
        return DeleteEach.run(parent.root, paths, path -> files.delete(path, recursive));
    }
}
