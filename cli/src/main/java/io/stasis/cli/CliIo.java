package io.stasis.cli;

import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Map;

/**
 * What a command may touch of the outside world: its streams, environment and working directory,
 * passed in so that tests (and the {@link CliDaemon}) can run the CLI in-process.
 *
 * @param errIsTerminal stderr is a terminal, so progress lines may be drawn on it ({@link Progress})
 * @param cwd           the caller's working directory, against which local paths resolve
 * @param remote        the caller is another process ({@link CliDaemon}): a command that needs the
 *                      caller's terminal, files or signals must {@link #requireLocal} instead
 */
record CliIo(PrintStream out, PrintStream err, InputStream in, Map<String, String> env, boolean errIsTerminal,
             Path cwd, boolean remote) {
    CliIo(PrintStream out, PrintStream err, InputStream in, Map<String, String> env, boolean errIsTerminal) {
        this(out, err, in, env, errIsTerminal, Path.of("").toAbsolutePath(), false);
    }

    String env(String name) {
        String value = env.get(name);
        return value == null || value.isBlank() ? null : value;
    }

    /** A local path as the caller means it: relative ones against its working directory. */
    Path local(Path path) {
        return cwd.resolve(path);
    }

    /**
     * For a command that needs the calling process itself (its terminal, its files, its signals):
     * in the daemon, hands the command back to the caller, which runs it in a JVM of its own.
     */
    void requireLocal(String why) {
        if (remote) throw new RunLocally(why);
    }

    /** Thrown by {@link #requireLocal} before the command did anything. */
    static final class RunLocally extends RuntimeException {
        RunLocally(String why) {
            super(why, null, false, false);
        }
    }
}
