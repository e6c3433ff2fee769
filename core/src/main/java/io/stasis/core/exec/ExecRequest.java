package io.stasis.core.exec;

import io.stasis.core.error.StasisException;
import io.stasis.core.sandbox.EnvVars;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A command to run inside a sandbox and wait for.
 *
 * @param cmd     argv; {@code cmd[0]} is looked up in PATH as a shell would
 * @param cwd     working directory inside the sandbox; the default is {@code /root}, or {@code /} without it
 * @param env     variables added to the sandbox's own for this command
 * @param stdin   bytes fed to standard input, then end of file; none means {@code /dev/null}
 * @param timeout after it the command's whole process tree is killed
 * @param user    who it runs as: a user name or uid of the sandbox, optionally {@code :group}; empty: root
 */
public record ExecRequest(List<String> cmd, Optional<String> cwd, Map<String, String> env, Optional<byte[]> stdin, Duration timeout,
                          Optional<String> user) {
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    public static final Duration MAX_TIMEOUT = Duration.ofHours(24);
    public static final int MAX_ARGS = 4096;
    public static final int MAX_ARGV_BYTES = 256 * 1024;

    public ExecRequest {
        if (cmd.stream().anyMatch(Objects::isNull)) throw StasisException.invalid("cmd", "arguments must be strings, not null");
        cmd = List.copyOf(cmd);
        env = Map.copyOf(EnvVars.validateEnv("env", env));
        if (cmd.isEmpty()) throw StasisException.invalid("cmd", "must name a program: [\"ls\", \"-l\"]");
        if (cmd.size() > MAX_ARGS) throw StasisException.invalid("cmd", "at most " + MAX_ARGS + " arguments");
        long bytes = 0;
        for (String a : cmd) {
            if (a.indexOf('\0') >= 0) throw StasisException.invalid("cmd", "arguments must not contain NUL");
            bytes += a.length();
        }
        if (cmd.getFirst().isEmpty()) throw StasisException.invalid("cmd", "the program name must not be empty");
        if (bytes > MAX_ARGV_BYTES) throw StasisException.invalid("cmd", "arguments longer than " + MAX_ARGV_BYTES + " bytes in all");
        cwd.ifPresent(c -> {
            if (!c.startsWith("/") || c.indexOf('\0') >= 0) throw StasisException.invalid("cwd", "must be an absolute path, was '" + c + "'");
        });
        if (timeout.isNegative() || timeout.isZero() || timeout.compareTo(MAX_TIMEOUT) > 0)
            throw StasisException.invalid("timeoutMs", "must be between 1 and " + MAX_TIMEOUT.toMillis());
        user.ifPresent(u -> {
            if (!SandboxUsers.SPEC.matcher(u).matches())
                throw StasisException.invalid("user", "must be a user name or uid, optionally :group, was '" + u + "'");
        });
    }

    public ExecRequest(List<String> cmd, Optional<String> cwd, Map<String, String> env, Optional<byte[]> stdin, Duration timeout) {
        this(cmd, cwd, env, stdin, timeout, Optional.empty());
    }

    public static ExecRequest of(String... cmd) {
        return new ExecRequest(List.of(cmd), Optional.empty(), Map.of(), Optional.empty(), DEFAULT_TIMEOUT);
    }
}
