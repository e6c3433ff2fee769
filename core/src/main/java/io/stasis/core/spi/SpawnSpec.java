package io.stasis.core.spi;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One process to start inside a sandbox.
 *
 * @param argv     the program and its arguments; the program is looked up in {@code env}'s PATH
 * @param cwd      the working directory; empty means {@code /root}, falling back to {@code /}
 * @param env      the complete environment of the process
 * @param stdin    bytes to feed, then end of file; empty means {@code /dev/null}
 */
public record SpawnSpec(List<String> argv, Optional<String> cwd, Map<String, String> env, Optional<byte[]> stdin) {
    public SpawnSpec {
        argv = List.copyOf(argv);
        env = Map.copyOf(env);
    }
}
