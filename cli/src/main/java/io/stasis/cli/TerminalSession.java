package io.stasis.cli;

import io.stasis.sdk.StasisClientException;
import io.stasis.sdk.Terminal;
import io.stasis.sdk.TerminalRequest;
import io.stasis.sdk.TerminalSize;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Connects the CLI's own stdin and stdout to a terminal in a sandbox ({@code stasis shell},
 * {@code stasis exec -t}) and returns the remote exit code. On a local terminal it switches to raw
 * mode (restored on every way out), sends the local size at the start and on each window resize;
 * from a pipe it passes the bytes through and, at their end, ends the terminal's input (Ctrl-D, as
 * a user would type it), so that a shell reading a script from the pipe ends once it has run it.
 */
final class TerminalSession {
    private final StasisCommand root;
    private final String sandbox;
    private final List<String> cmd;
    private final boolean forwardInput;

    /**
     * @param cmd          the program, or empty for a login shell
     * @param forwardInput whether stdin goes to the terminal ({@code -i}); without it only output flows
     */
    TerminalSession(StasisCommand root, String sandbox, List<String> cmd, boolean forwardInput) {
        this.root = root;
        this.sandbox = sandbox;
        this.cmd = List.copyOf(cmd);
        this.forwardInput = forwardInput;
    }

    int run() {
        CliIo io = root.io();
        Optional<LocalTerminal> local = LocalTerminal.of(io);
        var request = TerminalRequest.builder().cmd(cmd);
        local.flatMap(LocalTerminal::size).ifPresent(request::size);
        PrintStream out = io.out();
        // Raw before the first byte arrives: output in cooked mode would get a second \r per line.
        LocalTerminal.RawMode raw = forwardInput && local.isPresent() ? local.get().enterRawMode() : null;
        try (Terminal terminal = root.client().sandboxes().terminal(sandbox, request.build(), bytes -> {
            out.write(bytes, 0, bytes.length);
            out.flush();
        })) {
            ExitGuard hangUpOnExit = ExitGuard.of("close-terminal", terminal::close);
            WindowResizes resizes = WindowResizes.watch(() -> local.flatMap(LocalTerminal::size)
                    .ifPresent(size -> resize(terminal, size)));
            try {
                if (forwardInput) {
                    Thread.ofVirtual().name("stasis-terminal-input").start(() -> pump(io.in(), terminal, local.isEmpty()));
                }
                int code = terminal.awaitExit(null);
                out.flush();
                return code;
            } finally {
                resizes.close();
                hangUpOnExit.close();
            }
        } finally {
            if (raw != null) raw.close();
        }
    }

    private static void resize(Terminal terminal, TerminalSize size) {
        try {
            terminal.resize(size.cols(), size.rows());
        } catch (StasisClientException e) {
            // The session is ending; the exit code says how.
        }
    }

    /** Copies the CLI's stdin to the terminal until either ends. */
    private static void pump(InputStream in, Terminal terminal, boolean endOfInputAtTheEnd) {
        byte[] buffer = new byte[8192];
        try {
            int n;
            byte last = '\n';
            while ((n = in.read(buffer)) >= 0) {
                if (n == 0) continue;
                terminal.write(Arrays.copyOf(buffer, n));
                last = buffer[n - 1];
            }
            if (!endOfInputAtTheEnd) return;
            // A last line without its newline is still a command the script meant to run.
            if (last != '\n' && last != '\r') terminal.write(new byte[]{'\n'});
            terminal.closeInput();
        } catch (IOException | StasisClientException e) {
            // The terminal closed (the process ended) or stdin failed: nothing more to send.
        }
    }
}
