package io.stasis.cli;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.Sandboxes;
import picocli.CommandLine.Command;

/** {@code stasis resume ID}: prints the new state. */
@Command(name = "resume", mixinStandardHelpOptions = true,
        description = {"Bring a paused, hibernated or stopped sandbox back to running.",
                "A hibernated one gets its processes back where they were; a stopped one boots fresh. Prints the new state."})
final class ResumeCommand extends StateChangeCommand {
    @Override
    Sandbox change(Sandboxes sandboxes, String idOrName) {
        return sandboxes.resume(idOrName);
    }

    @Override
    String progress() {
        return "resuming";
    }
}
