package io.stasis.cli;

import io.stasis.sdk.FileInfo;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/** {@code stasis files stat ID PATH}: one entry (a symlink itself, not what it points to). */
@Command(name = "stat", mixinStandardHelpOptions = true,
        description = "Show one file, directory or symlink of a sandbox (a symlink is not followed).")
final class FilesStatCommand implements Callable<Integer> {
    @ParentCommand
    FilesCommand parent;

    @Parameters(index = "0", paramLabel = "ID", description = "Sandbox id or name.")
    String id;

    @Parameters(index = "1", paramLabel = "PATH", description = "The path in the sandbox.")
    String path;

    @Override
    public Integer call() {
        var root = parent.root;
        FileInfo f = root.client().sandboxes().files(id).stat(path);
        return root.print(f, () -> Table.withoutHeaders()
                .row("PATH", f.path())
                .row("TYPE", f.type().wireName())
                .row("SIZE", f.size() + " (" + HumanFormat.size(f.size()) + ")")
                .row("MODE", f.mode())
                .row("MODIFIED", HumanFormat.time(f.modifiedAt()))
                .row("TARGET", f.symlinkTarget())
                .render());
    }
}
