package io.stasis.sdk;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A background process to start: it runs on with nobody attached, its output kept in the sandbox
 * (it survives hibernation, restarts of the service and forks).
 *
 * <pre>{@code
 * BackgroundProcess server = sandbox.processes().start(ProcessRequest.builder("python3", "-m", "http.server")
 *         .cwd("/root/site")
 *         .tag("web")
 *         .keepAlive(true)                     // the sandbox is not idle while it runs
 *         .keepAliveFor(Duration.ofHours(2))   // ... for at most two hours
 *         .build());
 * }</pre>
 */
public final class ProcessRequest {
    private final List<String> cmd;
    private final String cwd;
    private final Map<String, String> env;
    private final String tag;
    private final boolean keepAlive;
    private final Duration keepAliveFor;
    private final boolean stdin;
    private final TerminalSize pty;
    private final String user;

    private ProcessRequest(Builder b) {
        this.user = b.user;
        this.cmd = List.copyOf(b.cmd);
        this.cwd = b.cwd;
        this.env = Collections.unmodifiableMap(new LinkedHashMap<>(b.env));
        this.tag = b.tag;
        this.keepAlive = b.keepAlive;
        this.keepAliveFor = b.keepAliveFor;
        this.stdin = b.stdin;
        this.pty = b.pty;
    }

    /** A request with only a command line. */
    public static ProcessRequest of(String... cmd) {
        return builder(cmd).build();
    }

    public static Builder builder(String... cmd) {
        return new Builder().cmd(Arrays.asList(cmd));
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

    /** A label to find it by, or null. */
    public String tag() {
        return tag;
    }

    public boolean keepAlive() {
        return keepAlive;
    }

    /** How long {@link #keepAlive()} holds at most, or null for as long as it runs. */
    public Duration keepAliveFor() {
        return keepAliveFor;
    }

    /** Whether its standard input stays open for {@link BackgroundProcess#sendStdin(byte[])}. */
    public boolean stdin() {
        return stdin;
    }

    /** The terminal it runs on, or null for pipes. */
    public TerminalSize pty() {
        return pty;
    }

    /** Who it runs as (a user name or uid of the sandbox, optionally {@code :group}), or null for the template's user (else root). */
    public String user() {
        return user;
    }

    ProcessWire.Start toBody() {
        return new ProcessWire.Start(cmd, cwd, env.isEmpty() ? null : env, tag, keepAlive ? true : null, keepAliveFor,
                stdin ? true : null, pty, user);
    }

    @Override
    public String toString() {
        return "ProcessRequest" + cmd + (tag == null ? "" : " tag " + tag);
    }

    /** Builds a {@link ProcessRequest}; only the command is required. */
    public static final class Builder {
        private final List<String> cmd = new ArrayList<>();
        private String cwd;
        private final Map<String, String> env = new LinkedHashMap<>();
        private String user;

        /** Runs it as a user of the sandbox: a name of its {@code /etc/passwd} or a uid, optionally {@code :group}. */
        public Builder user(String user) {
            this.user = user;
            return this;
        }
        private String tag;
        private boolean keepAlive;
        private Duration keepAliveFor;
        private boolean stdin;
        private TerminalSize pty;

        private Builder() {
        }

        /** Replaces the command line. */
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

        public Builder tag(String tag) {
            this.tag = tag;
            return this;
        }

        /** While it runs, the sandbox is not idle (so not paused, hibernated or stopped for idleness). */
        public Builder keepAlive(boolean keepAlive) {
            this.keepAlive = keepAlive;
            return this;
        }

        /** Bounds {@link #keepAlive(boolean)}; sets it too. Whole milliseconds; null: as long as it runs. */
        public Builder keepAliveFor(Duration duration) {
            if (duration != null) {
                ApiDurations.format(duration); // fails now if the API cannot express it
                this.keepAlive = true;
            }
            this.keepAliveFor = duration;
            return this;
        }

        /** Keeps its standard input open for writes instead of {@code /dev/null}. */
        public Builder stdin(boolean open) {
            this.stdin = open;
            return this;
        }

        /** Runs it on a terminal of this size (its own session; stdout and stderr are the terminal). */
        public Builder pty(int cols, int rows) {
            this.pty = new TerminalSize(cols, rows);
            return this;
        }

        public ProcessRequest build() {
            if (cmd.isEmpty()) throw new IllegalArgumentException("cmd must not be empty");
            return new ProcessRequest(this);
        }
    }
}
