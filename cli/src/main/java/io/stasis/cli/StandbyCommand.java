package io.stasis.cli;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.Sandboxes;
import picocli.CommandLine.Command;

/** {@code stasis standby ID}: prints the new state. */
@Command(name = "standby", mixinStandardHelpOptions = true,
        description = {"Put a sandbox in standby: freeze its processes and give their memory back to the host "
                + "(paged out to swap); no CPU, almost no RAM. resume (or any exec or file call) brings it back in milliseconds.",
                "Prints the new state. A stopped or hibernated sandbox cannot go to standby."})
final class StandbyCommand extends StateChangeCommand {
    @Override
    Sandbox change(Sandboxes sandboxes, String idOrName) {
        return sandboxes.standby(idOrName);
    }
}
