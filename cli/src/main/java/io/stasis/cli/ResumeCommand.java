package io.stasis.cli;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.Sandboxes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code stasis resume ID}: prints the new state. */
@Command(name = "resume", mixinStandardHelpOptions = true,
        description = {"Bring a paused, standby, hibernated or stopped sandbox back to running.",
                "A hibernated one gets its processes back where they were; a stopped one boots fresh. Prints the new state."})
final class ResumeCommand extends StateChangeCommand {
    @Option(names = "--expect-generation", paramLabel = "N",
            description = "Refuse (error generation_mismatch) if the sandbox is at an older generation than N, "
                    + "the one you saw last (stasis info shows it).")
    Long expectGeneration;

    @Override
    Sandbox change(Sandboxes sandboxes, String idOrName) {
        return expectGeneration == null ? sandboxes.resume(idOrName) : sandboxes.resume(idOrName, expectGeneration);
    }

    @Override
    String progress() {
        return "resuming";
    }
}
