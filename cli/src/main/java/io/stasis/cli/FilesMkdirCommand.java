package io.stasis.cli;

import io.stasis.sdk.FileInfo;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis files mkdir ID PATH}: prints the directory's path. */
@Command(name = "mkdir", mixinStandardHelpOptions = true,
        description = "Create a directory and its parents in a sandbox (nothing to do if it exists); prints its path.")
final class FilesMkdirCommand implements Callable<Integer> {
    @ParentCommand
    FilesCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", paramLabel = "PATH", description = "The directory to create.")
    String path;

    @Option(names = "--mode", paramLabel = "MODE", description = "Octal permissions, e.g. 0700 (default: the server's).")
    String mode;

    @Override
    public Integer call() {
        var root = parent.root;
        FileInfo dir = root.client().sandboxes().files(id).mkdir(path, mode);
        return root.print(dir, () -> dir.path() + "\n");
    }
}
