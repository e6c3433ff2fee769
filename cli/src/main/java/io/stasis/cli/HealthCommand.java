package io.stasis.cli;

import io.stasis.sdk.Health;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/** {@code stasis health}: the server's {@code /healthz}. */
@Command(name = "health", mixinStandardHelpOptions = true,
        description = {"Check that the server is up: prints its status (ok).",
                "Needs no API key. Exits 0 when it is ok, 3 when it cannot be reached, 1 for any other status."})
final class HealthCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Override
    public Integer call() {
        Health health = root.client(false).health();
        root.print(health, () -> health.status() + "\n");
        return health.isOk() ? ExitCodes.OK : ExitCodes.ERROR;
    }
}
