package io.stasis.cli;

import io.stasis.sdk.Sandbox;
import io.stasis.sdk.Sandboxes;
import picocli.CommandLine.Command;

/** {@code stasis hibernate ID}: prints the new state. */
@Command(name = "hibernate", mixinStandardHelpOptions = true,
        description = {"Hibernate a sandbox: its processes go to disk, their memory is freed.",
                "The processes are written to an image on disk; resume brings them back where they were. "
                        + "Prints the new state."})
final class HibernateCommand extends StateChangeCommand {
    @Override
    Sandbox change(Sandboxes sandboxes, String idOrName) {
        return sandboxes.hibernate(idOrName);
    }

    @Override
    String progress() {
        return "hibernating";
    }
}
