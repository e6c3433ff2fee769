package io.stasis.cli;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.Sandboxes;
import picocli.CommandLine.Command;

/** {@code stasis pause ID}: prints the new state. */
@Command(name = "pause", mixinStandardHelpOptions = true,
        description = {"Pause a sandbox: freeze its processes, memory kept, no CPU used.",
                "Prints the new state. A stopped or hibernated sandbox cannot be paused."})
final class PauseCommand extends StateChangeCommand {
    @Override
    Sandbox change(Sandboxes sandboxes, String idOrName) {
        return sandboxes.pause(idOrName);
    }
}
