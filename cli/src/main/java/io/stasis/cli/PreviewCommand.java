package io.stasis.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/** {@code stasis preview create|ls|info|rm}: a sandbox's ports served over HTTP. */
@Command(name = "preview", mixinStandardHelpOptions = true,
        description = {"Serve a sandbox's TCP port over HTTP through the service's preview listener.",
                "A private preview (the default) needs its token, shown once at create: as the "
                        + "X-Stasis-Preview-Token header, or open the printed link once in a browser (it sets a cookie)."},
        subcommands = {PreviewCreateCommand.class, PreviewListCommand.class, PreviewInfoCommand.class, PreviewRmCommand.class})
final class PreviewCommand extends CommandGroup {
    @ParentCommand
    StasisCommand root;
}
