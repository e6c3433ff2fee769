package io.stasis.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** Where a command runs in the sandbox: {@code --cwd} and {@code -e/--env}, shared by {@code exec} and {@code spawn}. */
final class WhereOptions {
    @Option(names = "--cwd", paramLabel = "DIR", description = "Working directory (default /root).")
    String cwd;

    @Option(names = {"-e", "--env"}, paramLabel = "K=V", description = "Extra environment variable (repeatable).")
    Map<String, String> env = new LinkedHashMap<>();
}
