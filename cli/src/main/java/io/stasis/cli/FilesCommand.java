package io.stasis.cli;

import io.stasis.sdk.FileInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/** {@code stasis files ls|stat|mkdir|mv|rm}: a sandbox's files, by the sandbox's own paths. */
@Command(name = "files", mixinStandardHelpOptions = true,
        description = {"List, inspect, create, move and delete a sandbox's files (cp copies them in and out, watch follows changes).",
                "Paths are the sandbox's own; a relative path is taken from /."},
        subcommands = {FilesListCommand.class, FilesStatCommand.class, FilesMkdirCommand.class, FilesMoveCommand.class,
                FilesRmCommand.class})
final class FilesCommand extends CommandGroup {
    @ParentCommand
    StasisCommand root;

    /** {@code notes -> /root/notes.txt} for a symlink, else the name. */
    static String name(FileInfo f) {
        return f.isSymlink() && f.symlinkTarget() != null ? f.name() + " -> " + f.symlinkTarget() : f.name();
    }
}
