package io.stasis.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.util.Map;

/**
 * What a command may touch of the outside world: its streams and environment, passed in so
 * that tests can run the CLI in-process. {@code errIsTerminal}: stderr is a terminal, so
 * progress lines may be drawn on it ({@link Progress}).
 */
record CliIo(PrintStream out, PrintStream err, InputStream in, Map<String, String> env, boolean errIsTerminal) {
    String env(String name) {
        String value = env.get(name);
        return value == null || value.isBlank() ? null : value;
    }
}
