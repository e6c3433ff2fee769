package io.stasis.cli;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.Sandboxes;
import picocli.CommandLine.Command;

/** {@code stasis start ID}: prints the new state. */
@Command(name = "start", mixinStandardHelpOptions = true,
        description = {"Start a stopped sandbox: boots a fresh init on the same files.",
                "Any other state is brought to running as resume does. Prints the new state."})
final class StartCommand extends StateChangeCommand {
    @Override
    Sandbox change(Sandboxes sandboxes, String idOrName) {
        return sandboxes.start(idOrName);
    }

    @Override
    String progress() {
        return "starting";
    }
}
