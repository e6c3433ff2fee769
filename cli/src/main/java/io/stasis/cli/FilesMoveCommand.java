package io.stasis.cli;

import io.stasis.sdk.FileInfo;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis files mv ID FROM TO}: prints the new path. */
@Command(name = "mv", mixinStandardHelpOptions = true,
        description = {"Move or rename a file or directory in a sandbox; prints the new path.",
                "An existing TO is an error (exit 5) unless --force."})
final class FilesMoveCommand implements Callable<Integer> {
    @ParentCommand
    FilesCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", paramLabel = "FROM", description = "The path to move.")
    String from;

    @Parameters(index = "2", paramLabel = "TO", description = "Its new path.")
    String to;

    @Option(names = {"-f", "--force"}, description = "Replace TO if it exists.")
    boolean force;

    @Override
    public Integer call() {
        var root = parent.root;
        FileInfo moved = root.client().sandboxes().files(id).move(from, to, force);
        return root.print(moved, () -> moved.path() + "\n");
    }
}
