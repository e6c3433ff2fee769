package io.stasis.sdk;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A command to run in a sandbox. {@code cmd[0]} is searched in {@code PATH}; use
 * {@code sh -c "..."} for shell syntax.
 *
 * <pre>{@code
 * ExecResult r = sandbox.exec(ExecRequest.builder("python3", "-c", "import sys; print(sys.stdin.read())")
 *         .cwd("/root")
 *         .env("X", "1")
 *         .stdin("hello")
 *         .timeout(Duration.ofSeconds(30))
 *         .build());
 * }</pre>
 */
public final class ExecRequest {
    private final List<String> cmd;
    private final String cwd;
    private final Map<String, String> env;
    private final byte[] stdin;
    private final Duration timeout;
    private final boolean base64Output;
    private final String user;

    private ExecRequest(Builder b) {
        this.user = b.user;
        this.cmd = List.copyOf(b.cmd);
        this.cwd = b.cwd;
        this.env = Collections.unmodifiableMap(new LinkedHashMap<>(b.env));
        this.stdin = b.stdin == null ? null : b.stdin.clone();
        this.timeout = b.timeout;
        this.base64Output = b.base64Output;
    }

    /** A request with only a command line. */
    public static ExecRequest of(String... cmd) {
        return builder(cmd).build();
    }

    public static Builder builder(String... cmd) {
        return new Builder().cmd(cmd);
    }

    public static Builder builder(List<String> cmd) {
        return new Builder().cmd(cmd);
    }

    public List<String> cmd() {
        return cmd;
    }

    /** The working directory, or null for the server's default ({@code /root}). */
    public String cwd() {
        return cwd;
    }

    public Map<String, String> env() {
        return env;
    }

    /** Bytes fed to the command's stdin, or null for {@code /dev/null}. */
    public byte[] stdin() {
        return stdin == null ? null : stdin.clone();
    }

    /** The command's time limit, or null for the server's default (60 s). */
    public Duration timeout() {
        return timeout;
    }

    /** Who the command runs as (a user name or uid of the sandbox, optionally {@code :group}), or null for root. */
    public String user() {
        return user;
    }

    /** Whether the server should send output as base64 (byte-exact) instead of UTF-8 text. */
    public boolean base64Output() {
        return base64Output;
    }

    /** The JSON body. */
    ExecWire.Body toBody() {
        String stdinText = null;
        String stdinEncoding = null;
        if (stdin != null) {
            if (Utf8.isValid(stdin)) {
                stdinText = new String(stdin, StandardCharsets.UTF_8);
            } else {
                stdinText = Utf8.base64(stdin);
                stdinEncoding = "base64";
            }
        }
        return new ExecWire.Body(cmd, cwd, env.isEmpty() ? null : env, stdinText, stdinEncoding,
                base64Output ? "base64" : null, timeout == null ? null : Math.max(1, timeout.toMillis()), user);
    }

    @Override
    public String toString() {
        return "ExecRequest" + cmd + (cwd == null ? "" : " in " + cwd);
    }

    /** Builds an {@link ExecRequest}; only the command is required. */
    public static final class Builder {
        private final List<String> cmd = new ArrayList<>();
        private String cwd;
        private final Map<String, String> env = new LinkedHashMap<>();
        private byte[] stdin;
        private String user;
        private Duration timeout;
        private boolean base64Output;

        private Builder() {
        }

        /** Replaces the command line. */
        public Builder cmd(String... argv) {
            return cmd(Arrays.asList(argv));
        }

        public Builder cmd(List<String> argv) {
            cmd.clear();
            for (String arg : argv) cmd.add(Objects.requireNonNull(arg, "a command argument is null"));
            return this;
        }

        public Builder cwd(String cwd) {
            this.cwd = cwd;
            return this;
        }

        public Builder env(String key, String value) {
            env.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        public Builder env(Map<String, String> variables) {
            variables.forEach(this::env);
            return this;
        }

        /** Feeds these bytes to stdin, then end of file. */
        public Builder stdin(byte[] bytes) {
            this.stdin = bytes == null ? null : bytes.clone();
            return this;
        }

        /** Feeds this text (UTF-8) to stdin, then end of file. */
        public Builder stdin(String text) {
            this.stdin = text == null ? null : text.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        /** Kills the command's whole process tree after this long (server default 60 s, at most 24 h). */
        public Builder timeout(Duration timeout) {
            if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
                throw new IllegalArgumentException("timeout must be positive, was " + timeout);
            }
            this.timeout = timeout;
            return this;
        }

        /** Asks for output as base64 so that non-UTF-8 bytes survive exactly. */
        /**
         * Runs the command as a user of the sandbox: a name of its {@code /etc/passwd} or a uid, optionally
         * {@code :group}; its HOME, USER and LOGNAME are set and the working directory defaults to its home.
         */
        public Builder user(String user) {
            this.user = user;
            return this;
        }

        public Builder base64Output(boolean base64) {
            this.base64Output = base64;
            return this;
        }

        public ExecRequest build() {
            if (cmd.isEmpty()) throw new IllegalArgumentException("cmd must not be empty");
            return new ExecRequest(this);
        }
    }
}
