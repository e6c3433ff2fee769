package io.stasis.cli;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.Sandboxes;
import picocli.CommandLine.Command;

/** {@code stasis stop ID}: prints the new state. */
@Command(name = "stop", mixinStandardHelpOptions = true,
        description = {"Stop a sandbox: its processes end, its files are kept.",
                "Processes get SIGTERM, then SIGKILL after 10 s; start boots it again. Prints the new state."})
final class StopCommand extends StateChangeCommand {
    @Override
    Sandbox change(Sandboxes sandboxes, String idOrName) {
        return sandboxes.stop(idOrName);
    }
}
