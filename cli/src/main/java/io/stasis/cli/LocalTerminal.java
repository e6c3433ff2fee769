package io.stasis.cli;

import io.stasis.sdk.TerminalSize;
import java.io.Console;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The terminal the CLI runs in, and the only class that runs {@code stty}: its size, and raw mode
 * for a remote shell (keys, Ctrl-C included, go to the sandbox as typed, nothing echoed locally).
 * stty acts on its standard input, so every call gets {@code /dev/tty} as stdin.
 */
final class LocalTerminal {
    private static final File TTY = new File("/dev/tty");
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private LocalTerminal() {
    }

    /**
     * The terminal, when the CLI's stdin and stdout both are one; empty for pipes and files
     * (scripts, tests), where bytes are passed through as they are.
     */
    static Optional<LocalTerminal> of(CliIo io) {
        Console console = System.console();
        if (io.in() != System.in || console == null || !console.isTerminal()) return Optional.empty();
        return Optional.of(new LocalTerminal());
    }

    /** Its size now, or empty when stty cannot tell (the remote side then keeps its default). */
    Optional<TerminalSize> size() {
        try {
            String[] rowsCols = stty("size").strip().split("\\s+"); // "24 80"
            return Optional.of(new TerminalSize(Integer.parseInt(rowsCols[1]), Integer.parseInt(rowsCols[0])));
        } catch (CommandFailure | IllegalArgumentException | IndexOutOfBoundsException e) {
            return Optional.empty(); // no terminal after all, or output stty did not promise
        }
    }

    /**
     * Saves the current mode ({@code stty -g}) and switches to {@code raw -echo} until the result
     * is closed, or the JVM exits.
     */
    RawMode enterRawMode() {
        String saved = stty("-g").strip();
        var raw = new RawMode(saved);
        try {
            stty("raw", "-echo");
        } catch (CommandFailure e) {
            raw.close();
            throw e;
        }
        return raw;
    }

    /** Raw mode while open; closing restores the saved mode once. */
    final class RawMode implements AutoCloseable {
        private final String saved;
        private final AtomicBoolean restored = new AtomicBoolean();
        private final ExitGuard guard;

        private RawMode(String saved) {
            this.saved = saved;
            this.guard = ExitGuard.of("restore-terminal", this::restore);
        }

        private void restore() {
            if (restored.compareAndSet(false, true)) stty(saved);
        }

        @Override
        public void close() {
            try {
                restore();
            } finally {
                guard.close();
            }
        }
    }

    private static String stty(String... args) {
        var argv = new ArrayList<>(List.of("stty"));
        argv.addAll(List.of(args));
        Process process = null;
        try {
            process = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(TTY)).start();
            var out = drain(process.getInputStream());
            var err = drain(process.getErrorStream());
            if (!process.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new CommandFailure(String.join(" ", argv) + " did not finish within " + TIMEOUT.toSeconds() + " s");
            }
            if (process.exitValue() != 0) {
                throw new CommandFailure(String.join(" ", argv) + " failed (exit " + process.exitValue() + "): "
                        + err.join().strip());
            }
            return out.join();
        } catch (IOException e) {
            throw new CommandFailure("cannot run " + String.join(" ", argv) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommandFailure("interrupted while running " + String.join(" ", argv));
        } finally {
            if (process != null && process.isAlive()) process.destroyForcibly();
        }
    }

    /** Reads a pipe to its end on a virtual thread: a full pipe would stall stty. */
    private static CompletableFuture<String> drain(InputStream in) {
        var text = new CompletableFuture<String>();
        Thread.ofVirtual().start(() -> {
            try (in) {
                text.complete(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                text.complete("");
            }
        });
        return text;
    }
}
