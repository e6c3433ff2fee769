package io.stasis.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** Where and as whom a command runs in the sandbox: {@code --cwd}, {@code -e/--env} and {@code -u/--user}, shared by {@code exec} and {@code spawn}. */
final class WhereOptions {
    @Option(names = "--cwd", paramLabel = "DIR", description = "Working directory (default: the template's, else the user's home, else /root).")
    String cwd;

    @Option(names = {"-u", "--user"}, paramLabel = "USER[:GROUP]",
            description = "Run as this user of the sandbox (a name or uid; default: the template's user, else root).")
    String user;

    @Option(names = {"-e", "--env"}, paramLabel = "K=V", description = "Extra environment variable (repeatable).")
    Map<String, String> env = new LinkedHashMap<>();
}
