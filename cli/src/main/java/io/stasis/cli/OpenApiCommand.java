package io.stasis.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

/** {@code stasis openapi}: the OpenAPI description of the API the server serves. */
@Command(name = "openapi", mixinStandardHelpOptions = true,
        description = {"Print the OpenAPI 3 description (YAML) of the API this server serves.",
                "Needs no API key. The format is YAML: --json is refused (exit 2)."})
final class OpenApiCommand implements Callable<Integer> {
    @ParentCommand
    StasisCommand root;

    @Override
    public Integer call() {
        root.printVerbatim("the spec is YAML", () -> root.client(false).openApiSpec());
        return ExitCodes.OK;
    }
}
