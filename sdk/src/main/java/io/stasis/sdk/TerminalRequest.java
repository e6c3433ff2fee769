package io.stasis.sdk;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What {@link Sandbox#terminal(TerminalRequest)} opens: a new process on a terminal (a login shell
 * unless a command is given), or an attachment to a terminal process that already runs.
 *
 * <pre>{@code
 * TerminalRequest.builder().size(120, 40).build();                 // a login shell
 * TerminalRequest.builder().cmd("python3").build();                // a REPL
 * TerminalRequest.builder().attach(pid).build();                   // back to a running one, its last 64 KiB replayed
 * }</pre>
 */
public final class TerminalRequest {
    private final TerminalSize size;
    private final List<String> cmd;
    private final Long attachPid;
    private final Long offset;
    private final Boolean hangup;

    private TerminalRequest(Builder b) {
        this.size = b.size;
        this.cmd = List.copyOf(b.cmd);
        this.attachPid = b.attachPid;
        this.offset = b.offset;
        this.hangup = b.hangup;
    }

    /** A login shell (bash where the sandbox has it) on an 80x24 terminal. */
    public static TerminalRequest loginShell() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The size, or null for the server's default (80x24; an attached terminal keeps its own). */
    public TerminalSize size() {
        return size;
    }

    /** The argv of a new process; empty for a login shell or when attaching. */
    public List<String> cmd() {
        return cmd;
    }

    /** The running terminal process to attach to, or null to start one. */
    public Long attachPid() {
        return attachPid;
    }

    Query toQuery() {
        var query = Query.of();
        if (size != null) query.add("cols", size.cols()).add("rows", size.rows());
        cmd.forEach(arg -> query.add("cmd", arg));
        return query.add("pid", attachPid).add("offset", offset).add("hangup", hangup);
    }

    /** Builds a {@link TerminalRequest}; everything is optional. */
    public static final class Builder {
        private TerminalSize size;
        private final List<String> cmd = new ArrayList<>();
        private Long attachPid;
        private Long offset;
        private Boolean hangup;

        private Builder() {
        }

        public Builder size(int cols, int rows) {
            this.size = new TerminalSize(cols, rows);
            return this;
        }

        public Builder size(TerminalSize size) {
            this.size = size;
            return this;
        }

        /** Runs this program instead of a login shell. */
        public Builder cmd(String... argv) {
            return cmd(Arrays.asList(argv));
        }

        public Builder cmd(List<String> argv) {
            cmd.clear();
            for (String arg : argv) cmd.add(Objects.requireNonNull(arg, "a command argument is null"));
            return this;
        }

        /** Attaches to this running terminal process instead of starting one. */
        public Builder attach(long pid) {
            if (pid < 1) throw new IllegalArgumentException("a pid is a positive integer, was " + pid);
            this.attachPid = pid;
            return this;
        }

        /** When attaching: replay its output from this byte offset instead of its last 64 KiB. */
        public Builder replayFrom(long offset) {
            if (offset < 0) throw new IllegalArgumentException("an offset is never negative, was " + offset);
            this.offset = offset;
            return this;
        }

        /**
         * Whether closing the terminal sends SIGHUP to the process, as closing a terminal window
         * does. Default: yes for a new process, no when attaching.
         */
        public Builder hangup(boolean hangup) {
            this.hangup = hangup;
            return this;
        }

        public TerminalRequest build() {
            if (attachPid != null && !cmd.isEmpty()) {
                throw new IllegalArgumentException("attach to a running process or start a command, not both");
            }
            if (offset != null && attachPid == null) {
                throw new IllegalArgumentException("replayFrom applies only when attaching");
            }
            return new TerminalRequest(this);
        }
    }
}
