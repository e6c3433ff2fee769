package io.stasis.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/** {@code stasis template build|ls|show|logs|rm}: templates of your own, built from a Dockerfile or from steps. */
@Command(name = "template", mixinStandardHelpOptions = true,
        description = {"Build templates of your own and manage them; sandboxes are then created from them with `stasis create --template NAME`.",
                "A build runs in a sandbox of its own; each step that changes files is cached, so a later build with the same "
                        + "first steps starts after them. Each successful build installs a new version, seen by your tenant alone."},
        subcommands = {TemplateBuildCommand.class, TemplateImportCommand.class, TemplateListCommand.class, TemplateShowCommand.class, TemplateLogsCommand.class,
                TemplateRmCommand.class})
final class TemplateCommand extends CommandGroup {
    @ParentCommand
    StasisCommand root;
}
