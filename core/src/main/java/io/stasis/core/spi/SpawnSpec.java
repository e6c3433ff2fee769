package io.stasis.core.spi;

import io.stasis.core.error.StasisException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One process to start inside a sandbox.
 *
 * @param argv      the program and its arguments; the program is looked up in {@code env}'s PATH
 * @param cwd       the working directory; empty means {@code /root}, falling back to {@code /}
 * @param env       the complete environment of the process
 * @param stdin     bytes to feed, then end of file; empty (and no pipe) means {@code /dev/null}
 * @param stdinPipe standard input stays open for writes through the runtime until closed
 * @param terminal  run it on a terminal of this size (stdout and stderr are then one stream, and
 *                  standard input is always a pipe)
 * @param user      who it runs as; empty: root
 */
public record SpawnSpec(List<String> argv, Optional<String> cwd, Map<String, String> env, Optional<byte[]> stdin,
                        boolean stdinPipe, Optional<TerminalSize> terminal, Optional<ProcessUser> user) {
    public SpawnSpec {
        argv = List.copyOf(argv);
        env = Map.copyOf(env);
        if (stdin.isPresent() && (stdinPipe || terminal.isPresent()))
            throw new IllegalArgumentException("stdin bytes and a stdin pipe exclude each other");
    }

    public SpawnSpec(List<String> argv, Optional<String> cwd, Map<String, String> env, Optional<byte[]> stdin) {
        this(argv, cwd, env, stdin, false, Optional.empty(), Optional.empty());
    }

    public SpawnSpec(List<String> argv, Optional<String> cwd, Map<String, String> env, Optional<byte[]> stdin,
                     boolean stdinPipe, Optional<TerminalSize> terminal) {
        this(argv, cwd, env, stdin, stdinPipe, terminal, Optional.empty());
    }

    public SpawnSpec as(Optional<ProcessUser> user) {
        return new SpawnSpec(argv, cwd, env, stdin, stdinPipe, terminal, user);
    }

    /** A terminal's size in characters. */
    public record TerminalSize(int cols, int rows) {
        public TerminalSize {
            if (cols < 1 || cols > 10_000 || rows < 1 || rows > 10_000)
                throw StasisException.invalid("size", "cols and rows must be between 1 and 10000, were " + cols + "x" + rows);
        }
    }
}
