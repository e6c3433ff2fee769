package io.stasis.core.process;

import io.stasis.core.error.StasisException;
import io.stasis.core.exec.ExecRequest;
import io.stasis.core.sandbox.EnvVars;
import io.stasis.core.spi.SpawnSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A background process to start.
 *
 * @param keepAlive    while it runs, its sandbox does not count as idle
 * @param keepAliveFor keepAlive holds only this long after the start (empty: as long as it runs)
 * @param tag          the caller's label for it, to find it again
 * @param stdin        its standard input stays open for writes until closed (else it reads /dev/null)
 * @param terminal     run it on a terminal of this size (output is then one stream; stdin is open)
 * @param user         who it runs as (a user name or uid of the sandbox, optionally :group); empty: root
 */
public record ProcessRequest(List<String> cmd, Optional<String> cwd, Map<String, String> env, boolean keepAlive,
                             Optional<Duration> keepAliveFor, Optional<String> tag, boolean stdin,
                             Optional<SpawnSpec.TerminalSize> terminal, Optional<String> user) {
    public ProcessRequest {
        cmd = List.copyOf(cmd);
        env = Map.copyOf(EnvVars.validateEnv("env", env));
        // The same rules as a run-and-wait command's.
        new ExecRequest(cmd, cwd, env, Optional.empty(), ExecRequest.DEFAULT_TIMEOUT, user);
        tag.ifPresent(t -> {
            if (t.isBlank() || t.length() > 128 || t.indexOf('\n') >= 0) throw StasisException.invalid("tag", "must be 1-128 characters on one line");
        });
        if (keepAliveFor.isPresent() && !keepAlive) throw StasisException.invalid("keepAliveFor", "needs keepAlive: true");
    }

    public ProcessRequest(List<String> cmd, Optional<String> cwd, Map<String, String> env, boolean keepAlive,
                          Optional<Duration> keepAliveFor, Optional<String> tag, boolean stdin, Optional<SpawnSpec.TerminalSize> terminal) {
        this(cmd, cwd, env, keepAlive, keepAliveFor, tag, stdin, terminal, Optional.empty());
    }
}
